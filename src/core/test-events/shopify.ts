import type { FixtureContext, FixturePayload, TestFixture } from './fixture.js';

/**
 * Shopify webhooks (https://shopify.dev/docs/api/webhooks): the REST resource as JSON, routed
 * by the X-Shopify-Topic header, deduplicated on X-Shopify-Webhook-Id.
 */

const API_VERSION = '2025-01';
const SHOP = 'switchboard-dev.myshopify.com';

function delivery(c: FixtureContext, topic: string, json: Record<string, unknown>): FixturePayload {
  return {
    json,
    headers: {
      'user-agent': 'Shopify-Captain-Hook',
      'x-shopify-topic': topic,
      'x-shopify-shop-domain': SHOP,
      'x-shopify-api-version': API_VERSION,
      'x-shopify-webhook-id': c.uuid(),
      'x-shopify-event-id': c.uuid(),
      'x-shopify-triggered-at': c.isoMs(),
    },
  };
}

function order(c: FixtureContext, financialStatus: 'pending' | 'paid') {
  const id = c.int(5_000_000_000, 6_000_000_000) * 1000 + c.int(0, 1000);
  const number = c.int(1001, 9999);
  const price = (19 + c.int(0, 80)).toFixed(2);
  return {
    id,
    admin_graphql_api_id: `gid://shopify/Order/${id}`,
    app_id: 580111,
    browser_ip: '203.0.113.7',
    buyer_accepts_marketing: false,
    cancel_reason: null,
    cancelled_at: null,
    confirmation_number: c.id('', 9).toUpperCase(),
    confirmed: true,
    contact_email: 'jenny.rosen@example.com',
    created_at: c.iso(-30).replace('Z', '-04:00'),
    currency: 'USD',
    current_subtotal_price: price,
    current_total_price: price,
    current_total_tax: '0.00',
    customer: { id: c.int(7_000_000_000, 8_000_000_000) * 1000, email: 'jenny.rosen@example.com', first_name: 'Jenny', last_name: 'Rosen', state: 'enabled', verified_email: true, currency: 'USD' },
    email: 'jenny.rosen@example.com',
    financial_status: financialStatus,
    fulfillment_status: null,
    line_items: [
      {
        id: c.int(13_000_000_000, 14_000_000_000) * 1000,
        admin_graphql_api_id: `gid://shopify/LineItem/${c.int(13_000_000_000, 14_000_000_000)}`,
        fulfillable_quantity: 1,
        fulfillment_status: null,
        gift_card: false,
        grams: 200,
        name: 'Webhook Mug - Black',
        price,
        product_id: c.int(8_000_000_000, 9_000_000_000) * 1000,
        quantity: 1,
        requires_shipping: true,
        sku: 'MUG-BLK',
        taxable: true,
        title: 'Webhook Mug',
        variant_id: c.int(40_000_000_000, 50_000_000_000) * 1000,
        variant_title: 'Black',
        vendor: 'switchboard',
      },
    ],
    name: `#${number}`,
    order_number: number,
    order_status_url: `https://${SHOP}/${c.int(60_000_000, 70_000_000)}/orders/${c.hex(16)}/authenticate?key=${c.hex(16)}`,
    payment_gateway_names: ['bogus'],
    processed_at: c.iso(-30).replace('Z', '-04:00'),
    shipping_address: { first_name: 'Jenny', last_name: 'Rosen', address1: '354 Oyster Point Blvd', city: 'South San Francisco', province: 'California', country: 'United States', zip: '94080', country_code: 'US', province_code: 'CA' },
    subtotal_price: price,
    tags: '',
    test: true,
    token: c.hex(16),
    total_discounts: '0.00',
    total_line_items_price: price,
    total_price: price,
    total_tax: '0.00',
    updated_at: c.iso().replace('Z', '-04:00'),
  };
}

export const SHOPIFY_FIXTURES: TestFixture[] = [
  {
    eventType: 'orders/create',
    description: 'A new order (payment pending)',
    build: (c) => delivery(c, 'orders/create', order(c, 'pending')),
  },
  {
    eventType: 'orders/paid',
    description: 'An order whose payment was captured',
    build: (c) => delivery(c, 'orders/paid', order(c, 'paid')),
  },
  {
    eventType: 'products/update',
    description: 'A product edited (price and inventory of one variant)',
    build(c) {
      const id = c.int(8_000_000_000, 9_000_000_000) * 1000;
      return delivery(c, 'products/update', {
        id,
        admin_graphql_api_id: `gid://shopify/Product/${id}`,
        title: 'Webhook Mug',
        body_html: '<p>Holds 350 ml of coffee, or one webhook payload.</p>',
        vendor: 'switchboard',
        product_type: 'Mugs',
        created_at: c.iso(-90 * 86_400).replace('Z', '-04:00'),
        handle: 'webhook-mug',
        updated_at: c.iso().replace('Z', '-04:00'),
        published_at: c.iso(-89 * 86_400).replace('Z', '-04:00'),
        status: 'active',
        published_scope: 'global',
        tags: 'kitchen, mugs',
        variants: [
          {
            id: c.int(40_000_000_000, 50_000_000_000) * 1000,
            product_id: id,
            title: 'Black',
            price: '24.00',
            sku: 'MUG-BLK',
            position: 1,
            inventory_policy: 'deny',
            compare_at_price: null,
            option1: 'Black',
            taxable: true,
            barcode: null,
            inventory_item_id: c.int(45_000_000_000, 46_000_000_000) * 1000,
            inventory_quantity: c.int(0, 200),
            created_at: c.iso(-90 * 86_400).replace('Z', '-04:00'),
            updated_at: c.iso().replace('Z', '-04:00'),
          },
        ],
        options: [{ id: c.int(10_000_000_000, 11_000_000_000) * 1000, product_id: id, name: 'Color', position: 1, values: ['Black'] }],
        images: [],
        image: null,
      });
    },
  },
];
