/**
 * The relative links of a tree of Markdown files — the package's README and docs, unpacked — that lead nowhere
 * inside that tree: a file or folder that is not there, or a `#fragment` no heading of the target file makes (GitHub's
 * anchors: lower case, punctuation dropped, spaces to hyphens, a repeated heading numbered). Links in code are
 * not links and are skipped; absolute URLs are another matter.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";

const FENCED = /^ {0,3}(`{3,}|~{3,})[\s\S]*?^ {0,3}\1/gm;
const INLINE_CODE = /(`+)[\s\S]*?\1/g;
/** `[text](href "title")`, `![alt](href)`, a reference definition `[x]: href`, `<a href>` / `<img src>`. */
const LINK = /\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)|^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)|<(?:a|img)\s[^>]*?(?:href|src)="([^"]+)"/gm;
const HEADING = /^ {0,3}#{1,6}\s+(.+?)(?:\s+#+)?\s*$/gm;

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? markdownFiles(p) : e.name.endsWith(".md") ? [p] : [];
  });
}

/** anchors: the fragments a Markdown file answers to, as GitHub renders its headings (and any `<a id|name>`). */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const [, heading] of text.replace(FENCED, "").matchAll(HEADING)) {
    const words = heading!.replace(/<[^>]+>/g, "").replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1");
    const slug = words.toLowerCase().replace(/[^\p{L}\p{N}\p{M}\p{Pc}\s-]/gu, "").replace(/\s/g, "-");
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    out.add(n === 0 ? slug : `${slug}-${n}`);
  }
  for (const [, id] of text.matchAll(/<a\s[^>]*?(?:id|name)="([^"]+)"/g)) out.add(id!);
  return out;
}

/** brokenLinks: "file: href (why)" for each relative link under `root` that leaves the tree or leads nowhere in it. */
export function brokenLinks(root: string): string[] {
  const broken: string[] = [];
  for (const file of markdownFiles(root)) {
    const text = readFileSync(file, "utf8");
    const where = path.relative(root, file);
    for (const m of text.replace(FENCED, "").replace(INLINE_CODE, "").matchAll(LINK)) {
      const href = (m[1] ?? m[2] ?? m[3])!;
      if (/^[a-z][a-z\d+.-]*:/i.test(href) || href.startsWith("//")) continue;
      const [target, fragment] = href.split("#") as [string, string | undefined];
      const to = target === "" ? file : path.resolve(path.dirname(file), decodeURI(target));
      if (path.relative(root, to).startsWith("..")) broken.push(`${where}: ${href} (outside the package)`);
      else if (!existsSync(to)) broken.push(`${where}: ${href} (no such file)`);
      else if (fragment && statSync(to).isFile() && to.endsWith(".md") && !anchors(readFileSync(to, "utf8")).has(fragment)) broken.push(`${where}: ${href} (no such heading)`);
    }
  }
  return broken;
}
