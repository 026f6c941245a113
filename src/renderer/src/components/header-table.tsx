/** Request or response headers as a name/value table (values already redacted by the core). */
export function HeaderTable({ headers, label }: { headers: Record<string, string>; label: string }) {
  return (
    <table className="kv-table" aria-label={label}>
      <tbody>
        {Object.entries(headers).map(([name, value]) => (
          <tr key={name}>
            <th scope="row" className="mono">
              {name}
            </th>
            <td className="mono">{value}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
