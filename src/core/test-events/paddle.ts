import type { FixtureContext, TestFixture } from './fixture.js';

/**
 * Paddle Billing notifications (https://developer.paddle.com/webhooks/overview):
 * `{event_id, event_type, occurred_at, notification_id, data}` with Paddle's `txn_01…` /
 * `sub_01…` ids (a prefix and 26 lowercase ULID characters).
 */

function paddleId(c: FixtureContext, prefix: string): string {
  return `${prefix}_01${c.id('', 24).toLowerCase()}`;
}

function notification(c: FixtureContext, type: string, data: Record<string, unknown>) {
  return { json: { event_id: paddleId(c, 'evt'), event_type: type, occurred_at: c.isoMs(), notification_id: paddleId(c, 'ntf'), data } };
}

function price(c: FixtureContext) {
  return {
    id: paddleId(c, 'pri'),
    product_id: paddleId(c, 'pro'),
    type: 'standard',
    description: 'Monthly',
    name: 'Pro (monthly)',
    tax_mode: 'account_setting',
    billing_cycle: { interval: 'month', frequency: 1 },
    trial_period: null,
    unit_price: { amount: '3000', currency_code: 'USD' },
    unit_price_overrides: [],
    quantity: { minimum: 1, maximum: 100 },
    status: 'active',
    custom_data: null,
    import_meta: null,
    created_at: c.isoMs(-90 * 86_400),
    updated_at: c.isoMs(-90 * 86_400),
  };
}

const period = (c: FixtureContext) => ({ starts_at: c.isoMs(), ends_at: c.isoMs(30 * 86_400) });

function subscription(c: FixtureContext, status: 'active' | 'canceled') {
  const now = c.isoMs();
  const canceled = status === 'canceled';
  return {
    id: paddleId(c, 'sub'),
    status,
    customer_id: paddleId(c, 'ctm'),
    address_id: paddleId(c, 'add'),
    business_id: null,
    currency_code: 'USD',
    created_at: now,
    updated_at: now,
    started_at: now,
    first_billed_at: now,
    next_billed_at: canceled ? null : c.isoMs(30 * 86_400),
    paused_at: null,
    canceled_at: canceled ? now : null,
    collection_mode: 'automatic',
    billing_details: null,
    current_billing_period: canceled ? null : period(c),
    billing_cycle: { interval: 'month', frequency: 1 },
    scheduled_change: null,
    items: [
      {
        status: 'active',
        quantity: 1,
        recurring: true,
        created_at: now,
        updated_at: now,
        previously_billed_at: now,
        next_billed_at: canceled ? null : c.isoMs(30 * 86_400),
        trial_dates: null,
        price: price(c),
      },
    ],
    custom_data: null,
    import_meta: null,
    discount: null,
  };
}

export const PADDLE_FIXTURES: TestFixture[] = [
  {
    eventType: 'transaction.completed',
    description: 'A checkout transaction paid and completed',
    build(c) {
      const totals = { subtotal: '3000', tax: '0', discount: '0', total: '3000', grand_total: '3000', fee: '200', earnings: '2800', credit: '0', credit_to_balance: '0', balance: '0', currency_code: 'USD' };
      return notification(c, 'transaction.completed', {
        id: paddleId(c, 'txn'),
        status: 'completed',
        customer_id: paddleId(c, 'ctm'),
        address_id: paddleId(c, 'add'),
        business_id: null,
        custom_data: null,
        origin: 'web',
        collection_mode: 'automatic',
        subscription_id: paddleId(c, 'sub'),
        invoice_id: paddleId(c, 'inv'),
        invoice_number: `${c.int(100, 999)}-${c.int(10_000, 99_999)}`,
        billing_details: null,
        billing_period: period(c),
        currency_code: 'USD',
        discount_id: null,
        created_at: c.isoMs(-20),
        updated_at: c.isoMs(),
        billed_at: c.isoMs(-5),
        items: [{ price: price(c), quantity: 1, proration: null }],
        details: {
          tax_rates_used: [{ tax_rate: '0', totals: { subtotal: '3000', discount: '0', tax: '0', total: '3000' } }],
          totals,
          adjusted_totals: { subtotal: '3000', tax: '0', total: '3000', grand_total: '3000', fee: '200', earnings: '2800', currency_code: 'USD' },
          payout_totals: null,
          adjusted_payout_totals: null,
          line_items: [],
        },
        payments: [
          {
            payment_attempt_id: c.uuid(),
            stored_payment_method_id: c.uuid(),
            amount: '3000',
            status: 'captured',
            error_code: null,
            method_details: { type: 'card', card: { type: 'visa', last4: '4242', expiry_month: 12, expiry_year: 2030, cardholder_name: 'Jenny Rosen' } },
            created_at: c.isoMs(-10),
            captured_at: c.isoMs(-5),
          },
        ],
        checkout: { url: `https://example.com/pay?_ptxn=${paddleId(c, 'txn')}` },
      });
    },
  },
  {
    eventType: 'subscription.created',
    description: 'A subscription started (monthly price)',
    build: (c) => notification(c, 'subscription.created', { ...subscription(c, 'active'), transaction_id: paddleId(c, 'txn') }),
  },
  {
    eventType: 'subscription.canceled',
    description: 'A subscription canceled',
    build: (c) => notification(c, 'subscription.canceled', subscription(c, 'canceled')),
  },
];
