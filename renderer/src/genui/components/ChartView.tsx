/**
 * Bar, line and pie charts from data only (recharts). Colours come from our palette, sizes from
 * our layout; the model supplies numbers and labels, which recharts renders as SVG text. The
 * same data is in a visually hidden table for screen readers, so the drawing is aria-hidden, and
 * nothing inside it may take focus (axe aria-hidden-focus): recharts' keyboard layer (a
 * tabbable svg) and the pie's tabbable sector group are turned off; the table is the
 * keyboard- and reader-friendly way to the numbers.
 */
import {
  Bar,
  BarChart,
  CartesianGrid,
  Cell,
  Legend,
  Line,
  LineChart,
  Pie,
  PieChart,
  Tooltip,
  XAxis,
  YAxis,
} from "recharts";
import type { NodeOf } from "../node-types";

const PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7"];
const WIDTH = 440;
const HEIGHT = 220;

export function ChartView({ node }: { node: NodeOf<"Chart"> }) {
  const { kind, title, labels, series, unit = "" } = node.props;
  // Row objects keyed by index, never by model-written names (no odd keys reach recharts).
  const data = labels.map((label, i) => {
    const row: Record<string, string | number> = { label };
    series.forEach((s, j) => {
      row[`s${j}`] = s.values[i] ?? 0;
    });
    return row;
  });
  const format = (v: unknown) => `${String(v)}${unit}`;
  let chart;
  if (kind === "pie") {
    chart = (
      <PieChart width={WIDTH} height={HEIGHT} accessibilityLayer={false}>
        <Pie
          data={data}
          dataKey="s0"
          nameKey="label"
          outerRadius={80}
          isAnimationActive={false}
          rootTabIndex={-1}
        >
          {data.map((_, i) => (
            <Cell key={i} fill={PALETTE[i % PALETTE.length]} />
          ))}
        </Pie>
        <Tooltip formatter={format} />
        <Legend />
      </PieChart>
    );
  } else {
    const Chart = kind === "bar" ? BarChart : LineChart;
    chart = (
      <Chart width={WIDTH} height={HEIGHT} data={data} accessibilityLayer={false}>
        <CartesianGrid strokeDasharray="3 3" />
        <XAxis dataKey="label" />
        <YAxis />
        <Tooltip formatter={format} />
        {series.length > 1 && <Legend />}
        {series.map((s, j) =>
          kind === "bar" ? (
            <Bar
              key={j}
              dataKey={`s${j}`}
              name={s.name}
              fill={PALETTE[j % PALETTE.length]}
              isAnimationActive={false}
            />
          ) : (
            <Line
              key={j}
              dataKey={`s${j}`}
              name={s.name}
              stroke={PALETTE[j % PALETTE.length]}
              isAnimationActive={false}
            />
          ),
        )}
      </Chart>
    );
  }
  return (
    <figure className="genui-chart" aria-label={title ?? `${kind} chart`}>
      {title && <figcaption className="genui-chart__title">{title}</figcaption>}
      <div aria-hidden="true">{chart}</div>
      <table className="visually-hidden">
        <caption>{title ?? `${kind} chart`}</caption>
        <thead>
          <tr>
            <th scope="col">Label</th>
            {series.map((s, j) => (
              <th key={j} scope="col">
                {s.name}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {labels.map((label, i) => (
            <tr key={i}>
              <th scope="row">{label}</th>
              {series.map((s, j) => (
                <td key={j}>{format(s.values[i])}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </figure>
  );
}
