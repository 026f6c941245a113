/**
 * A step of `Switchboard.start()`, reported as it begins (SwitchboardOptions.onStartupPhase) and
 * logged: `message` is the log line; the desktop's start-up screen words its own text by `step`.
 * Its own file so the shell can name it without importing the composition root.
 */
export interface StartupPhase {
  step: 'creating-database' | 'opening-database' | 'migrating' | 'applying-journal' | 'starting-servers';
  message: string;
}
