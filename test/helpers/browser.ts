/**
 * A minimal cookie-keeping HTTP user agent for driving the hosted pages without a browser:
 * follows redirects until it leaves the server (the client's redirect URI) and submits
 * the forms it is shown. The real-browser tests use Chromium; this one exercises the
 * protocol.
 */
export class FormBrowser {
  private readonly jar = new Map<string, Map<string, string>>();

  /** `headers` go with every request (e.g. the X-Forwarded-For a trusted proxy would add, to be another caller). */
  constructor(
    private readonly stopAt: (url: URL) => boolean,
    private readonly headers: Record<string, string> = {},
  ) {}

  /**
   * Another window of this browser: its cookies so far, copied. (This agent keeps one cookie per
   * name, where a browser keeps one per name and path: two sign-ins in one agent would share the
   * interaction cookie that a browser keeps apart.)
   */
  fork(): FormBrowser {
    const other = new FormBrowser(this.stopAt, this.headers);
    for (const [host, cookies] of this.jar) other.jar.set(host, new Map(cookies));
    return other;
  }

  /** The Cookie header this agent would send to `url` (for a test that sends its own requests). */
  cookieHeader(url: URL): string {
    return [...(this.jar.get(url.host) ?? new Map())].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  private store(url: URL, response: Response): void {
    const cookies = this.jar.get(url.host) ?? new Map<string, string>();
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const index = pair!.indexOf('=');
      const name = pair!.slice(0, index).trim();
      const value = pair!.slice(index + 1).trim();
      if (/expires=Thu, 01 Jan 1970/i.test(line) || value === '') cookies.delete(name);
      else cookies.set(name, value);
    }
    this.jar.set(url.host, cookies);
  }

  /** Requests and follows redirects; returns the last page or the redirect that left the server. */
  async request(
    start: string,
    init: { method?: string; form?: Record<string, string> } = {},
  ): Promise<{ url: URL; status: number; html: string; location?: URL }> {
    let url = new URL(start);
    let method = init.method ?? 'GET';
    let body: string | undefined = init.form ? new URLSearchParams(init.form).toString() : undefined;
    for (let hop = 0; hop < 15; hop += 1) {
      const response = await fetch(url, {
        method,
        redirect: 'manual',
        headers: {
          ...this.headers,
          cookie: this.cookieHeader(url),
          ...(body ? { 'content-type': 'application/x-www-form-urlencoded', origin: url.origin } : {}),
          accept: 'text/html',
        },
        body,
      });
      this.store(url, response);
      const location = response.headers.get('location');
      if (response.status >= 300 && response.status < 400 && location) {
        const next = new URL(location, url);
        if (this.stopAt(next)) return { url, status: response.status, html: '', location: next };
        url = next;
        method = 'GET';
        body = undefined;
        continue;
      }
      return { url, status: response.status, html: await response.text() };
    }
    throw new Error('too many redirects');
  }

  /** Submits the form whose action contains `actionPart`, with its hidden fields plus `fields`. */
  async submit(page: { url: URL; html: string }, actionPart: string, fields: Record<string, string> = {}) {
    const forms = [...page.html.matchAll(/<form[^>]*method="post"[^>]*action="([^"]+)"[^>]*>([\s\S]*?)<\/form>/g)];
    const form = forms.find((f) => f[1]!.includes(actionPart));
    if (!form) throw new Error(`no form with action ${actionPart} on ${page.url}: ${page.html.slice(0, 500)}`);
    const hidden = Object.fromEntries(
      [...form[2]!.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)].map((m) => [m[1]!, m[2]!.replace(/&amp;/g, '&')]),
    );
    return this.request(new URL(form[1]!.replace(/&amp;/g, '&'), page.url).toString(), { method: 'POST', form: { ...hidden, ...fields } });
  }
}
