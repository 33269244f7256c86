/**
 * The small Markdown subset that report text needs: paragraphs (blank-line separated),
 * `- ` / `* ` bullet lists, **bold** and `code`. Everything is escaped first; nothing else is
 * interpreted, so text from a trace or an error message can never inject markup.
 */
import { escapeHtml } from './html-escape.js';

export function inlineMarkdown(text: string): string {
  // split on code spans first so that ** inside code stays literal
  return text
    .split(/(`[^`]*`)/)
    .map((part) =>
      part.length >= 2 && part.startsWith('`') && part.endsWith('`')
        ? `<code>${escapeHtml(part.slice(1, -1))}</code>`
        : escapeHtml(part).replace(/\*\*(.+?)\*\*/g, '<strong>$1</strong>'),
    )
    .join('');
}

export function markdownToHtml(markdown: string): string {
  const out: string[] = [];
  const blocks = markdown.replace(/\r\n?/g, '\n').split(/\n\s*\n/);
  for (const block of blocks) {
    const lines = block.split('\n').filter((l) => l.trim() !== '');
    if (lines.length === 0) continue;
    let para: string[] = [];
    let items: string[] = [];
    const flushPara = () => {
      if (para.length) out.push(`<p>${para.map(inlineMarkdown).join('\n')}</p>`);
      para = [];
    };
    const flushList = () => {
      if (items.length) out.push(`<ul>\n${items.map((i) => `<li>${inlineMarkdown(i)}</li>`).join('\n')}\n</ul>`);
      items = [];
    };
    for (const line of lines) {
      const bullet = /^\s*[-*]\s+(.*)$/.exec(line);
      if (bullet) {
        flushPara();
        items.push(bullet[1]!);
      } else if (items.length && /^\s{2,}\S/.test(line)) {
        items[items.length - 1] += ' ' + line.trim(); // continuation of a list item
      } else {
        flushList();
        para.push(line.trim());
      }
    }
    flushPara();
    flushList();
  }
  return out.join('\n');
}
