import { fileURLToPath } from 'node:url'
import react from '@vitejs/plugin-react'
import { defineConfig } from 'vite'

/** Where `npm run build` puts the console, and where cloud/plugins/static-console.ts serves it from. */
export const CONSOLE_OUT_DIR = fileURLToPath(new URL('../../dist/console', import.meta.url))

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  // The console is served at /console (cloud/plugins/static-console.ts).
  base: '/console/',
  plugins: [react()],
  // Fastify serves the build; Vite's dev server is not used.
  clearScreen: false,
  build: {
    outDir: CONSOLE_OUT_DIR,
    emptyOutDir: true,
    target: 'es2022',
    // The Content-Security-Policy allows no data: URIs and no inline code: every asset is a file.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
  },
})
