// Vite's `?raw` imports (used to read docs in tests).
declare module "*?raw" {
  const text: string;
  export default text;
}
