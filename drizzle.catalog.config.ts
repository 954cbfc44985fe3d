import { defineConfig } from "drizzle-kit";

export default defineConfig({
  dialect: "sqlite",
  driver: "durable-sqlite",
  schema: "./src/tables/catalog.ts",
  out: "./migrations/catalog",
});
