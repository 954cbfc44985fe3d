// drizzle-kit's migrations.js imports each migration as text (wrangler.toml rule: Text for **/*.sql).
declare module "*.sql" {
  const text: string;
  export default text;
}
