/**
 * Counts in words for text output: `count(1, "version")` is "1 version", `count(2, "version")`
 * "2 versions"; an irregular plural is given (`count(n, "index", "indices")`).
 */
export function count(n: number, singular: string, pluralForm = `${singular}s`): string {
  return `${n} ${n === 1 ? singular : pluralForm}`;
}
