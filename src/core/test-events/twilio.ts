import type { FixtureContext, TestFixture } from './fixture.js';

/**
 * Twilio Messaging webhooks (https://www.twilio.com/docs/messaging/guides/webhook-request):
 * form-encoded, signed over the public URL Twilio calls, hence `receiver.public_url`.
 */

const FROM = '+14155550123';
const TO = '+14155550199';

function sid(c: FixtureContext, prefix: string): string {
  return `${prefix}${c.hex(16)}`;
}

function common(c: FixtureContext, accountSid: string, messageSid: string) {
  return { AccountSid: accountSid, ApiVersion: '2010-04-01', From: FROM, MessageSid: messageSid, SmsSid: messageSid, MessagingServiceSid: sid(c, 'MG') };
}

export const TWILIO_FIXTURES: TestFixture[] = [
  {
    eventType: 'message.received',
    description: 'An incoming SMS (the messaging webhook; stored as "message.received")',
    build(c) {
      const account = sid(c, 'AC');
      const message = sid(c, 'SM');
      return {
        form: {
          ...common(c, account, message),
          SmsMessageSid: message,
          SmsStatus: 'received',
          To: TO,
          Body: 'Is my order on its way?',
          NumMedia: '0',
          NumSegments: '1',
          FromCity: 'SAN FRANCISCO',
          FromState: 'CA',
          FromZip: '94103',
          FromCountry: 'US',
          ToCity: 'SAN FRANCISCO',
          ToState: 'CA',
          ToZip: '94105',
          ToCountry: 'US',
        },
        headers: { 'user-agent': 'TwilioProxy/1.1', 'i-twilio-idempotency-token': c.uuid() },
      };
    },
  },
  {
    eventType: 'message.delivered',
    description: 'A status callback for an outgoing SMS (stored as "message.delivered")',
    build(c) {
      const account = sid(c, 'AC');
      const message = sid(c, 'SM');
      return {
        form: { ...common(c, account, message), To: TO, MessageStatus: 'delivered', SmsStatus: 'delivered', RawDlrDoneDate: new Date(c.nowMs).toISOString().slice(2, 16).replace(/\D/g, '') },
        headers: { 'user-agent': 'TwilioProxy/1.1', 'i-twilio-idempotency-token': c.uuid() },
      };
    },
  },
  {
    eventType: 'call.ringing',
    description: 'An incoming voice call (the voice webhook; stored as "call.ringing")',
    build(c) {
      const account = sid(c, 'AC');
      return {
        form: { AccountSid: account, ApiVersion: '2010-04-01', CallSid: sid(c, 'CA'), CallStatus: 'ringing', Direction: 'inbound', From: FROM, Caller: FROM, To: TO, Called: TO, CallerCountry: 'US', CalledCountry: 'US' },
        headers: { 'user-agent': 'TwilioProxy/1.1', 'i-twilio-idempotency-token': c.uuid() },
      };
    },
  },
];
