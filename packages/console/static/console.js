// The console's live updates. The server renders every page; this script only follows /events
// (server-sent events fed by lifeguard's events exchange) and, when an event arrives or the refresh
// interval passes, asks the server for the current page's <main> again and puts it in place.
// Nothing here builds markup: the server's HTML is already escaped.
(() => {
  const main = () => document.getElementById('main');
  const live = () => document.getElementById('live');
  const refreshSeconds = Number(document.body.dataset.refreshSeconds) || 5;
  let pending = null;
  let feedConnected = false;

  // What the live indicator says; `held` adds that the page is not refreshed for a form's sake.
  let liveState = live()?.dataset.state ?? 'connecting';
  let liveText = live()?.textContent ?? '';
  let held = false;
  const showLive = () => {
    const element = live();
    if (!element) return;
    element.dataset.state = liveState;
    element.dataset.held = held ? 'form' : '';
    element.textContent = held ? `${liveText}; not refreshed while a form holds what you typed` : liveText;
  };
  const setLive = (state, text) => {
    liveState = state;
    liveText = text;
    showLive();
  };
  const hold = (value) => {
    if (held === value) return;
    held = value;
    showLive();
  };

  // A form the operator is typing into, or has typed into and left, is in use: putting a new <main> in
  // place would empty its fields (the name and operator token of a write action).
  const formInUse = () => {
    if (document.activeElement?.closest('form')) return true;
    const fields = main()?.querySelectorAll('form input, form textarea, form select') ?? [];
    return [...fields].some((field) => {
      if (field.type === 'hidden') return false;
      if (field.type === 'checkbox' || field.type === 'radio') return field.checked !== field.defaultChecked;
      if (field.tagName === 'SELECT')
        return [...field.options].some((option) => option.selected !== option.defaultSelected);
      return field.value !== field.defaultValue;
    });
  };

  const refresh = async () => {
    pending = null;
    if (formInUse()) return hold(true);
    try {
      const response = await fetch(location.href, { headers: { 'x-lifeguard-fragment': 'main' } });
      if (!response.ok && response.status !== 404) return;
      const text = await response.text();
      // Asked again: the operator may have started typing while the page was being read.
      if (formInUse()) return hold(true);
      hold(false);
      const parsed = new DOMParser().parseFromString(text, 'text/html');
      const next = parsed.getElementById('main');
      const current = main();
      if (next && current) current.replaceWith(document.adoptNode(next));
      document.body.dataset.updatedAt = new Date().toISOString();
    } catch {
      setLive('down', 'console unreachable');
    }
  };

  const soon = () => {
    if (pending === null) pending = setTimeout(refresh, 300);
  };

  const events = new EventSource('/events');
  events.addEventListener('open', () => setLive('connecting', 'connected, waiting for the event feed'));
  events.addEventListener('feed', (message) => {
    feedConnected = JSON.parse(message.data).connected === true;
    setLive(
      feedConnected ? 'live' : 'polling',
      feedConnected ? 'live' : `RabbitMQ not followed: re-reading every ${refreshSeconds} s`,
    );
  });
  events.addEventListener('lifeguard', (message) => {
    const notice = JSON.parse(message.data);
    document.body.dataset.lastEvent = notice.type;
    soon();
  });
  events.addEventListener('error', () =>
    setLive('down', `live updates interrupted: re-reading every ${refreshSeconds} s`),
  );
  setInterval(soon, refreshSeconds * 1000);
})();
