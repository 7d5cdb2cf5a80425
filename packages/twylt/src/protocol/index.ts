export * from './constants.js';
export * from './errors.js';
export * from './issues.js';
export * from './render.js';
