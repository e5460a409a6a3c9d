/**
 * Reads the human message out of an OpenStack error body:
 * - Nova: `{"badRequest": {"code": 400, "message": "Compute service of compute2 is still in use."}}`
 *   (the key is the fault name: badRequest, itemNotFound, conflictingRequest, computeFault, ...);
 * - Keystone: `{"error": {"code": 401, "message": "The request you have made requires authentication.", "title": "Unauthorized"}}`;
 * - webob/Glance: `{"message": "...", "code": "404 Not Found", "title": "Not Found"}`, or an HTML page
 *   (`<html><head><title>404 Not Found</title></head><body><h1>404 Not Found</h1>No image found ...`);
 * - anything else: the text with tags removed, whitespace collapsed, at most 500 characters.
 * @returns the message, or `HTTP <status>` for an empty body
 */
export function faultMessage(status: number, text: string): string {
  const trimmed = text.trim();
  if (trimmed === '') return `HTTP ${status}`;
  if (trimmed.startsWith('{')) {
    try {
      const message = messageFromJson(JSON.parse(trimmed) as unknown);
      if (message) return clip(message);
    } catch {
      // not JSON after all: fall through to the text form
    }
  }
  return clip(textFromMarkup(trimmed)) || `HTTP ${status}`;
}

function messageFromJson(body: unknown): string | null {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return null;
  const record = body as Record<string, unknown>;
  if (typeof record.message === 'string') return record.message;
  for (const value of Object.values(record)) {
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      const inner = (value as Record<string, unknown>).message;
      if (typeof inner === 'string') return inner;
    }
  }
  if (typeof record.title === 'string') return record.title;
  return null;
}

function textFromMarkup(text: string): string {
  if (!text.startsWith('<')) return text.replace(/\s+/g, ' ');
  // Keep the body when there is one (the title repeats the status line).
  const body = /<body[^>]*>([\s\S]*?)(<\/body>|$)/i.exec(text)?.[1] ?? text;
  return body
    .replace(/<(script|style)[\s\S]*?<\/\1>/gi, ' ')
    .replace(/<br\s*\/?>/gi, ' ')
    .replace(/<\/(h\d|p|div|title)>/gi, ': ')
    .replace(/<[^>]*>/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .replace(/(\s*:\s*)+$/, '')
    .replace(/\s+:/g, ':')
    .trim();
}

function clip(text: string): string {
  return text.length > 500 ? `${text.slice(0, 497)}...` : text;
}
