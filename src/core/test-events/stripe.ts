import type { FixtureContext, TestFixture } from './fixture.js';

/**
 * Stripe events (https://docs.stripe.com/api/events/object): an `event` envelope around the
 * object that changed, test mode (`livemode: false`), ids with Stripe's prefixes.
 */

const API_VERSION = '2024-06-20';

function event(c: FixtureContext, type: string, object: Record<string, unknown>, previous?: Record<string, unknown>) {
  return {
    json: {
      id: c.id('evt_1', 23),
      object: 'event',
      api_version: API_VERSION,
      created: c.unix(),
      data: { object, ...(previous ? { previous_attributes: previous } : {}) },
      livemode: false,
      pending_webhooks: 1,
      request: { id: c.id('req_', 14), idempotency_key: c.uuid() },
      type,
    },
  };
}

export const STRIPE_FIXTURES: TestFixture[] = [
  {
    eventType: 'checkout.session.completed',
    description: 'A Checkout Session paid in full (one-time payment, card)',
    build(c) {
      const amount = 2000 + c.int(0, 90) * 100;
      return event(c, 'checkout.session.completed', {
        id: c.id('cs_test_a1', 56),
        object: 'checkout.session',
        amount_subtotal: amount,
        amount_total: amount,
        cancel_url: 'https://example.com/cart',
        client_reference_id: null,
        created: c.unix(-42),
        currency: 'usd',
        customer: c.id('cus_', 14),
        customer_details: { address: { city: 'South San Francisco', country: 'US', line1: '354 Oyster Point Blvd', line2: null, postal_code: '94080', state: 'CA' }, email: 'jenny.rosen@example.com', name: 'Jenny Rosen', phone: null, tax_exempt: 'none', tax_ids: [] },
        expires_at: c.unix(86_358),
        livemode: false,
        metadata: { order_id: String(c.int(10_000, 99_999)) },
        mode: 'payment',
        payment_intent: c.id('pi_3', 23),
        payment_method_types: ['card'],
        payment_status: 'paid',
        status: 'complete',
        success_url: 'https://example.com/success?session_id={CHECKOUT_SESSION_ID}',
        total_details: { amount_discount: 0, amount_shipping: 0, amount_tax: 0 },
        url: null,
      });
    },
  },
  {
    eventType: 'payment_intent.succeeded',
    description: 'A PaymentIntent confirmed and captured (card ending 4242)',
    build(c) {
      const amount = 1000 + c.int(0, 500) * 10;
      const id = c.id('pi_3', 23);
      return event(c, 'payment_intent.succeeded', {
        id,
        object: 'payment_intent',
        amount,
        amount_capturable: 0,
        amount_received: amount,
        capture_method: 'automatic',
        client_secret: `${id}_secret_${c.id('', 25)}`,
        confirmation_method: 'automatic',
        created: c.unix(-3),
        currency: 'usd',
        customer: c.id('cus_', 14),
        description: 'Subscription creation',
        latest_charge: c.id('ch_3', 23),
        livemode: false,
        metadata: {},
        payment_method: c.id('pm_1', 23),
        payment_method_types: ['card'],
        receipt_email: 'jenny.rosen@example.com',
        status: 'succeeded',
      });
    },
  },
  {
    eventType: 'invoice.paid',
    description: 'A subscription invoice paid (one line item)',
    build(c) {
      const customer = c.id('cus_', 14);
      const subscription = c.id('sub_1', 23);
      const start = c.unix();
      return event(c, 'invoice.paid', {
        id: c.id('in_1', 23),
        object: 'invoice',
        account_country: 'US',
        amount_due: 1500,
        amount_paid: 1500,
        amount_remaining: 0,
        attempt_count: 1,
        attempted: true,
        billing_reason: 'subscription_cycle',
        collection_method: 'charge_automatically',
        created: c.unix(-3600),
        currency: 'usd',
        customer,
        customer_email: 'jenny.rosen@example.com',
        hosted_invoice_url: `https://invoice.stripe.com/i/acct_${c.id('', 16)}/test_${c.id('', 40)}`,
        lines: {
          object: 'list',
          data: [
            {
              id: c.id('il_1', 23),
              object: 'line_item',
              amount: 1500,
              currency: 'usd',
              description: '1 × Pro (at $15.00 / month)',
              period: { start, end: start + 30 * 86_400 },
              price: { id: c.id('price_1', 23), object: 'price', currency: 'usd', product: c.id('prod_', 14), recurring: { interval: 'month', interval_count: 1 }, unit_amount: 1500 },
              quantity: 1,
              subscription,
              type: 'subscription',
            },
          ],
          has_more: false,
          total_count: 1,
          url: `/v1/invoices/upcoming/lines?customer=${customer}`,
        },
        livemode: false,
        number: `${c.id('', 8).toUpperCase()}-0001`,
        paid: true,
        period_end: start,
        period_start: start - 30 * 86_400,
        status: 'paid',
        subscription,
        subtotal: 1500,
        total: 1500,
      });
    },
  },
  {
    eventType: 'customer.subscription.updated',
    description: 'A subscription moved to another price (with previous_attributes)',
    build(c) {
      const start = c.unix(-15 * 86_400);
      const item = (price: string, amount: number) => ({
        id: c.id('si_', 14),
        object: 'subscription_item',
        price: { id: price, object: 'price', currency: 'usd', product: c.id('prod_', 14), recurring: { interval: 'month', interval_count: 1 }, unit_amount: amount },
        quantity: 1,
      });
      const newPrice = c.id('price_1', 23);
      return event(
        c,
        'customer.subscription.updated',
        {
          id: c.id('sub_1', 23),
          object: 'subscription',
          billing_cycle_anchor: start,
          cancel_at_period_end: false,
          collection_method: 'charge_automatically',
          created: start,
          currency: 'usd',
          current_period_end: start + 30 * 86_400,
          current_period_start: start,
          customer: c.id('cus_', 14),
          items: { object: 'list', data: [item(newPrice, 4900)], has_more: false, total_count: 1 },
          livemode: false,
          metadata: {},
          status: 'active',
        },
        { items: { object: 'list', data: [item(c.id('price_1', 23), 1500)], has_more: false, total_count: 1 } },
      );
    },
  },
];
