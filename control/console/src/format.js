// How the console writes times, durations and numbers.

// "2026-11-27 08:30:12" in the browser's time zone; "" for an unset timestamp.
export function time(value) {
  if (!value) return '';
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return '';
  const pad = (n) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ` +
      `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

export function milliseconds(from, to) {
  if (!from || !to) return null;
  return new Date(to).getTime() - new Date(from).getTime();
}

// 950 -> "950 ms", 12500 -> "12.5 s", 3_700_000 -> "1 h 1 min".
export function duration(ms) {
  if (ms === null || ms === undefined) return '';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60000) return `${(ms / 1000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60000);
  if (minutes < 60) return `${minutes} min ${Math.floor((ms % 60000) / 1000)} s`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ${minutes % 60} min`;
  return `${Math.floor(hours / 24)} d ${hours % 24} h`;
}

// A protobuf Duration in JSON ("3600.5s") as milliseconds.
export function protoDuration(value) {
  if (!value) return 0;
  return parseFloat(String(value).replace(/s$/, '')) * 1000;
}

export function count(value) {
  return Number(value || 0).toLocaleString('en-US');
}

// The enum's tail, for people: "CONVERSATION_KIND_DIRECT" -> "direct".
export function enumName(value, prefix) {
  if (!value) return '';
  return String(value).replace(prefix, '').toLowerCase().replace(/_/g, ' ');
}
