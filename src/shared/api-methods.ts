/**
 * The names of the UI API's methods and their IPC channels. Deliberately free of imports: the
 * sandboxed preload bundles this file alone to build its narrow, named `window.switchboard`
 * API, so it must not pull zod (or anything else) in. The schemas live in `api.ts`.
 */

export const API_METHODS = [
  'listEvents',
  'getEvent',
  'replayEvent',
  'prepareReplay',
  'listReplays',
  'clearEvents',
  'listTestEvents',
  'sendTestEvent',
  'importEvents',
  'listProviders',
  'addProvider',
  'updateProvider',
  'removeProvider',
  'setProviderEnabled',
  'listRejections',
  'getActivity',
  'getSettings',
  'updateSettings',
  'getServerInfo',
  'listSuites',
  'getSuite',
  'saveSuite',
  'deleteSuite',
  'runSuite',
  'listSuiteRuns',
  'getSuiteRun',
  'acceptSuiteRun',
  'exportSuite',
  'importSuite',
  'listEventTypes',
  'describeEventType',
  'resetEventType',
] as const;

export type ApiMethod = (typeof API_METHODS)[number];

/** Live messages (new event, rejection, finished replay, provider status, config change). */
export const LIVE_CHANNEL = 'switchboard:live';

export const ipcChannel = (method: ApiMethod): `switchboard:${ApiMethod}` => `switchboard:${method}`;
