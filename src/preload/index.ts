import { contextBridge, ipcRenderer } from 'electron';
import { createSwitchboardBridge } from './api.js';

// The renderer's only door to main: see api.ts for what is (and is not) behind it.
contextBridge.exposeInMainWorld('switchboard', createSwitchboardBridge(ipcRenderer));
