// Placeholder: the Electron shell is its own issue (#6).
export {};
