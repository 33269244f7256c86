/** Markdown pieces of the generated sections: the "written by" line, table cells and tables. */

export const GENERATED_BY = (what: string) => `<!-- written by \`npm run docs\` from ${what}; edit the code, not this section -->`;

/** A Markdown table cell: pipes escaped, line breaks folded, < and > outside code spans escaped. */
export function cell(s: string): string {
  const folded = s.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');
  return folded
    .split('`')
    .map((part, i) => (i % 2 === 0 ? part.replace(/</g, '&lt;').replace(/>/g, '&gt;') : part))
    .join('`');
}

/** A Markdown table of the given header and rows. */
export function table(head: string[], rows: string[][]): string {
  return [`| ${head.join(' | ')} |`, `| ${head.map(() => '---').join(' | ')} |`, ...rows.map((r) => `| ${r.map(cell).join(' | ')} |`)].join('\n');
}
