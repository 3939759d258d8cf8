/**
 * Builds the plugin as one UMD file (dist/main.umd.cjs) that Airflow's UI loads with import().
 *
 * React, Chakra UI and Emotion are not bundled: the Airflow UI exposes its own instances as globals
 * (React, ReactDOM, ReactJSXRuntime, ChakraUI, EmotionReact), so the views render with Airflow's theme
 * and colour mode, light or dark, and the bundle stays small.
 */
import { resolve } from "node:path";
import { defineConfig } from "vitest/config";

export default defineConfig(({ command }) => ({
  esbuild: { jsx: "automatic" },
  // the bundle runs in the browser, where no process.env exists; tests keep React's development build (act())
  define: command === "build" ? { "process.env.NODE_ENV": JSON.stringify("production") } : {},
  build: {
    outDir: "dist",
    emptyOutDir: false, // dist/ also holds the nav icon, kept in git
    lib: {
      entry: resolve(__dirname, "src/main.tsx"),
      fileName: () => "main.umd.cjs",
      formats: ["umd"],
      name: "AirflowPlugin",
    },
    rollupOptions: {
      external: ["react", "react-dom", "react/jsx-runtime", "@chakra-ui/react", "@emotion/react"],
      output: {
        globals: {
          react: "React",
          "react-dom": "ReactDOM",
          "react/jsx-runtime": "ReactJSXRuntime",
          "@chakra-ui/react": "ChakraUI",
          "@emotion/react": "EmotionReact",
        },
      },
    },
  },
  test: {
    environment: "happy-dom",
    globals: true,
    include: ["src/**/*.test.ts", "src/**/*.test.tsx"],
  },
}));
