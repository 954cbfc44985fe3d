/**
 * Reading a JSON request body: bounded in size before parsing, a clear
 * error when it is not JSON, and `{}` for an empty body (every route whose
 * fields are all optional then needs no body at all).
 *
 * @module
 */
import { QueueError } from "../errors";

export async function readJsonBody(req: Request, maxBytes: number): Promise<unknown> {
  const declared = Number(req.headers.get("content-length") ?? "0");
  if (declared > maxBytes) throw tooLarge(declared, maxBytes);
  const bytes = await req.arrayBuffer();
  if (bytes.byteLength > maxBytes) throw tooLarge(bytes.byteLength, maxBytes);
  const text = new TextDecoder().decode(bytes);
  if (text.trim() === "") return {};
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new QueueError("invalid_request", `request body is not valid JSON: ${(e as Error).message}`, [{ path: "body", message: "not valid JSON" }]);
  }
}

function tooLarge(bytes: number, maxBytes: number): QueueError {
  return new QueueError("payload_too_large", `request body is ${bytes} bytes; the limit is ${maxBytes}`, { path: "body", bytes, limitBytes: maxBytes });
}
