// Placeholder: the preload is built with the Electron shell issue (#6).
export {};
