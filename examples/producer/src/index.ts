/**
 * An example producer Worker: `POST /signup {"email"}` enqueues a welcome
 * email (the example handler's `demo.echo` type stands in for a mail sender)
 * and answers with the job; `GET /jobs/<id>` reads it back. The binding is
 * typed as a plain `Service`: `createClient` takes any service binding.
 */
import { createClient, QueueClientError } from "edgequeue";

interface Env {
  /** [[services]] binding = "QUEUE", service = "edgequeue", entrypoint = "EdgeQueue" (wrangler.toml). */
  QUEUE: Service;
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const queue = createClient(env.QUEUE);
    const url = new URL(request.url);
    try {
      if (request.method === "POST" && url.pathname === "/signup") {
        const { email } = await request.json<{ email: string }>();
        // The email as id: a retried signup enqueues nothing twice (idempotent enqueue).
        const { job, created } = await queue.enqueue({ type: "demo.echo", payload: { welcome: email }, id: `welcome-${email.replace(/[^A-Za-z0-9._@-]/g, "_")}` });
        return Response.json({ created, job }, { status: created ? 201 : 200 });
      }
      const read = /^\/jobs\/(.+)$/.exec(url.pathname);
      if (request.method === "GET" && read) return Response.json({ job: await queue.get(decodeURIComponent(read[1]!)) });
      return new Response("POST /signup {\"email\"} or GET /jobs/<id>\n", { status: 404 });
    } catch (e) {
      // Refusals carry the API's code (invalid_request, not_found, …) and status-like meaning.
      if (e instanceof QueueClientError) return Response.json({ error: { code: e.code, message: e.message } }, { status: e.code === "not_found" ? 404 : 400 });
      throw e;
    }
  },
} satisfies ExportedHandler<Env>;
