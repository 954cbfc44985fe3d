/** @jsxImportSource hono/jsx */
/**
 * Sign-in: the API token (QUEUE_TOKEN) is the only credential; it is
 * exchanged for a session cookie and never stored in the browser.
 *
 * @module
 */
import { DOCTYPE, Head } from "../layout";

export function LoginPage(props: { error?: string | null; next: string }) {
  return (
    <>
    {DOCTYPE}
    <html lang="en">
      <Head title="Sign in" />
      <body>
        <div class="card login">
          <h1>edgequeue</h1>
          {props.error ? <div class="banner error" role="alert">{props.error}</div> : null}
          <form method="post" action="/dashboard/login">
            <input type="hidden" name="next" value={props.next} />
            <label>
              API token (QUEUE_TOKEN)
              <input name="token" type="password" autocomplete="current-password" required autofocus />
            </label>
            <button type="submit">Sign in</button>
          </form>
        </div>
      </body>
    </html>
    </>
  );
}
