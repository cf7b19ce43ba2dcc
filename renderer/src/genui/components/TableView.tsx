/** A data table (react-aria Table: keyboard navigation, sortable column headers). */
import { useMemo, useState } from "react";
import { Cell, Column, Row, Table, TableBody, TableHeader, type SortDescriptor } from "react-aria-components";
import type { TableCell } from "../../../../electron/api/genui";
import type { NodeOf } from "../node-types";
import { useInteraction } from "../use-interaction";

function compareCells(a: TableCell | undefined, b: TableCell | undefined): number {
  if (a === b) return 0;
  if (a === null || a === undefined) return 1;
  if (b === null || b === undefined) return -1;
  if (typeof a === "number" && typeof b === "number") return a - b;
  return String(a).localeCompare(String(b), undefined, { numeric: true });
}

function cellText(v: TableCell | undefined): string {
  if (v === null || v === undefined) return "";
  if (typeof v === "boolean") return v ? "Yes" : "No";
  return String(v);
}

export function TableView({ node }: { node: NodeOf<"Table"> }) {
  const { send, enabled } = useInteraction(node.id);
  const { caption, columns, rows, sortable } = node.props;
  const [sort, setSort] = useState<SortDescriptor | undefined>(undefined);
  const sorted = useMemo(() => {
    const indexed = rows.map((cells, i) => ({ cells, key: i }));
    if (!sort) return indexed;
    const col = columns.findIndex((c) => c.key === sort.column);
    if (col < 0) return indexed;
    const dir = sort.direction === "descending" ? -1 : 1;
    return [...indexed].sort((a, b) => dir * compareCells(a.cells[col], b.cells[col]) || a.key - b.key);
  }, [rows, columns, sort]);

  return (
    <div className="genui-table">
      {caption && <strong className="genui-table__caption">{caption}</strong>}
      <Table
        aria-label={caption ?? "Table"}
        sortDescriptor={sort}
        onSortChange={(d) => {
          setSort(d);
          // Sorting is a view change: reported as a signal, not a question for the model.
          if (enabled)
            send("sort", { column: String(d.column), direction: d.direction }).catch(() => undefined);
        }}
      >
        <TableHeader>
          {columns.map((c, i) => (
            <Column
              key={c.key}
              id={c.key}
              isRowHeader={i === 0}
              allowsSorting={sortable === true}
              className={c.numeric ? "genui-num" : undefined}
            >
              {({ sortDirection }) => (
                <span>
                  {c.label}
                  {sortDirection && (
                    <span aria-hidden="true">{sortDirection === "ascending" ? " ▲" : " ▼"}</span>
                  )}
                </span>
              )}
            </Column>
          ))}
        </TableHeader>
        <TableBody>
          {sorted.map((r) => (
            <Row key={r.key} id={r.key}>
              {columns.map((c, i) => (
                <Cell key={c.key} className={c.numeric ? "genui-num" : undefined}>
                  {cellText(r.cells[i])}
                </Cell>
              ))}
            </Row>
          ))}
        </TableBody>
      </Table>
    </div>
  );
}
