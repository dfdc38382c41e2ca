/**
 * A sortable table that stays fast and readable with thousands of rows: only the rows in view
 * (plus a margin) are in the DOM, the header stays put, every row has the same height.
 * Keyboard: ↑/↓ or j/k move the selection, PgUp/PgDn, Home/End, Enter opens the selected row;
 * column headers are buttons (Enter/Space sorts; aria-sort tells the order).
 * @module
 */
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { Sort } from '../shared/filters.ts';
import type { Item } from '../shared/types.ts';
import type { Column } from './columns.tsx';

export const ROW_HEIGHT = 32;
const OVERSCAN = 12;

export interface TableProps<T extends Item> {
  label: string;
  columns: Column<T>[];
  rows: T[];
  sort: Sort | null;
  onSort(sort: Sort): void;
  selected: number;
  onSelect(index: number): void;
  onOpen(item: T): void;
  openKey: string | null;
  now: Date;
}

export function Table<T extends Item>(props: TableProps<T>) {
  const { columns, rows, sort, selected } = props;
  const scroller = useRef<HTMLDivElement>(null);
  const [scrollTop, setScrollTop] = useState(0);
  const [height, setHeight] = useState(600);

  useLayoutEffect(() => {
    const el = scroller.current;
    if (!el) return;
    const ro = new ResizeObserver(() => setHeight(el.clientHeight));
    ro.observe(el);
    setHeight(el.clientHeight);
    return () => ro.disconnect();
  }, []);

  // Keep the selected row in view.
  useEffect(() => {
    const el = scroller.current;
    if (!el || selected < 0) return;
    const top = selected * ROW_HEIGHT;
    const header = ROW_HEIGHT;
    if (top < el.scrollTop) el.scrollTop = top;
    else if (top + ROW_HEIGHT > el.scrollTop + el.clientHeight - header) el.scrollTop = top + 2 * ROW_HEIGHT - el.clientHeight;
  }, [selected]);

  const first = Math.max(0, Math.floor(scrollTop / ROW_HEIGHT) - OVERSCAN);
  const last = Math.min(rows.length, Math.ceil((scrollTop + height) / ROW_HEIGHT) + OVERSCAN);
  const visible = rows.slice(first, last);
  const pageRows = Math.max(1, Math.floor(height / ROW_HEIGHT) - 1);

  const onKeyDown = (e: KeyboardEvent) => {
    if (e.target !== scroller.current || e.altKey || e.ctrlKey || e.metaKey) return;
    const move = (to: number) => {
      e.preventDefault();
      if (rows.length) props.onSelect(Math.max(0, Math.min(rows.length - 1, to)));
    };
    switch (e.key) {
      case 'ArrowDown':
      case 'j':
        return move(selected + 1);
      case 'ArrowUp':
      case 'k':
        return move(selected - 1);
      case 'PageDown':
        return move(selected + pageRows);
      case 'PageUp':
        return move(selected - pageRows);
      case 'Home':
        return move(0);
      case 'End':
        return move(rows.length - 1);
      case 'Enter':
      case 'o': {
        const item = rows[selected];
        if (item) {
          e.preventDefault();
          props.onOpen(item);
        }
      }
    }
  };

  const sortBy = (c: Column<T>) => {
    if (!c.sort) return;
    props.onSort({ key: c.sort, descending: sort?.key === c.sort ? !sort.descending : false });
  };

  return (
    <div
      class="table-scroll"
      ref={scroller}
      tabIndex={0}
      role="region"
      aria-label={`${props.label}: ${rows.length} rows; arrow keys select, Enter opens`}
      onScroll={(e) => setScrollTop((e.currentTarget as HTMLDivElement).scrollTop)}
      onKeyDown={onKeyDown}
    >
      <table class="grid" aria-rowcount={rows.length + 1} data-rows={rows.length}>
        <colgroup>
          {columns.map((c) => <col key={c.id} class={`p${c.priority}`} style={{ width: c.width }} />)}
        </colgroup>
        <thead>
          <tr>
            {columns.map((c) => (
              <th
                key={c.id}
                class={`p${c.priority}`}
                scope="col"
                aria-sort={sort && c.sort && sort.key === c.sort ? (sort.descending ? 'descending' : 'ascending') : undefined}
              >
                {c.sort ? (
                  <button type="button" class="sort" onClick={() => sortBy(c)} data-sort={c.sort}>
                    {c.label}
                    <span class="arrow" aria-hidden="true">{sort?.key === c.sort ? (sort.descending ? '▼' : '▲') : ''}</span>
                  </button>
                ) : (
                  c.label
                )}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {first > 0 && <tr class="spacer" style={{ height: `${first * ROW_HEIGHT}px` }} aria-hidden="true" />}
          {visible.map((item, i) => {
            const index = first + i;
            return (
              <tr
                key={item.key}
                class={`row h-${item.health}${index === selected ? ' selected' : ''}${item.key === props.openKey ? ' open' : ''}`}
                aria-rowindex={index + 2}
                aria-selected={index === selected}
                data-key={item.key}
                data-cluster={item.cluster}
                data-health={item.health}
                data-ready={String(item.converged)}
                title={item.whyMessage ?? undefined}
                onClick={() => {
                  props.onSelect(index);
                  props.onOpen(item);
                }}
              >
                {columns.map((c) => (
                  <td key={c.id} class={`p${c.priority} c-${c.id}`} title={c.title?.(item)}>
                    {c.render(item, props.now)}
                  </td>
                ))}
              </tr>
            );
          })}
          {last < rows.length && <tr class="spacer" style={{ height: `${(rows.length - last) * ROW_HEIGHT}px` }} aria-hidden="true" />}
        </tbody>
      </table>
      {rows.length === 0 && <p class="empty">No objects match the filters.</p>}
    </div>
  );
}
