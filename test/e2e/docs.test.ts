import { execFileSync } from 'node:child_process';
// The documents users read: the generated pages match the schemas and the commands, and every link in the README,
// the CHANGELOG and docs/ names a file that exists and that the package ships.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs script (it reads the built schemas in dist/)
import { renderEventsDoc } from '../../scripts/events-doc.mjs';
// @ts-expect-error: a plain .mjs script (it reads serve's option table in dist/)
import { renderConfigurationDoc } from '../../scripts/configuration-doc.mjs';
// @ts-expect-error: a plain .mjs script (it runs the built commands' --help)
import { renderCliDoc } from '../../scripts/cli-doc.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
/** The documents users read: the README, the CHANGELOG, the fixtures' README and every page of docs/. */
const DOCUMENTS = [
  'README.md',
  'CHANGELOG.md',
  'fixtures/README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

describe('documents', () => {
  it('docs/events.md is what the schemas say (run `npm run docs` after changing them)', () => {
    expect(read('docs/events.md')).toBe(renderEventsDoc());
  });

  it("docs/configuration.md is what serve's option table says (run `npm run docs` after changing it)", () => {
    expect(read('docs/configuration.md')).toBe(renderConfigurationDoc());
  });

  it("docs/cli.md is what the commands' help says (run `npm run docs` after changing a help text or an option table)", async () => {
    expect(read('docs/cli.md')).toBe(await renderCliDoc());
  });

  it('every relative link of README.md, CHANGELOG.md, fixtures/README.md and docs/*.md names a file the package ships', () => {
    const shipped = (JSON.parse(read('package.json')) as { files: string[] }).files;
    const broken: string[] = [];
    for (const document of DOCUMENTS) {
      for (const [, target] of read(document).matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/i.test(target!) || target!.startsWith('#')) continue;
        const path = normalize(relative(ROOT, join(ROOT, dirname(document), target!.replace(/#.*$/, ''))));
        if (!existsSync(join(ROOT, path))) broken.push(`${document}: ${target} (no such file)`);
        else if (!shipped.some((entry) => path === entry || path.startsWith(`${entry}/`)))
          broken.push(`${document}: ${target} (not in package.json "files")`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("the README's Documentation section links every page of docs/, so that none is found only by chance", () => {
    const section =
      read('README.md')
        .split('\n## ')
        .find((s) => s.startsWith('Documentation\n')) ?? '';
    const pages = readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md'));
    expect(pages.filter((page) => !section.includes(`(docs/${page})`))).toEqual([]);
  });

  it('the README says how to install the package, with the tarball name npm pack writes for this version', () => {
    const { name, version } = JSON.parse(read('package.json')) as { name: string; version: string };
    const install = read('README.md')
      .split('\n## ')
      .find((section) => section.startsWith('Install\n'));
    expect(install).toBeDefined();
    expect(install).toContain(`npm install ${name}\n`);
    const tarballs = [...install!.matchAll(/prequal-hooks-[\d.]+\.tgz/g)].map(([tarball]) => tarball);
    expect(tarballs.length).toBeGreaterThan(0);
    expect(new Set(tarballs)).toEqual(new Set([`${name}-${version}.tgz`]));
  });

  // Each example of a page is a file of test/examples, run by the e2e project: the page holds it verbatim.
  it.each([
    ['docs/testing.md', 'Replay in tests', 'test/examples/readme.test.ts'],
    ['docs/testing.md', 'PostgreSQL in tests', 'test/examples/readme-postgres.test.ts'],
    ['docs/handlers.md', 'One handler for several kinds', 'test/examples/readme-handlers.test.ts'],
  ])('the example of %s, "%s", is %s, verbatim', (page, _section, file) => {
    const example = read(file).replace(/^\/\/.*\n/, '');
    expect(read(page)).toContain(`\`\`\`ts\n${example}\`\`\`\n`);
  });

  it("the README's Node versions are package.json's engines, and .ci/run tests the lines it names beside Node 20", () => {
    const engines = (JSON.parse(read('package.json')) as { engines: { node: string } }).engines.node;
    const paragraph = /\*\*Node versions\.\*\*([\s\S]*?)\n\n/.exec(read('README.md'))?.[1] ?? '';
    expect(paragraph.replace(/\s+/g, ' ')).toContain(`\`engines\` is \`${engines}\``);
    const others = [...read('.ci/run').matchAll(/\.ci\/other-node prepare "\$other\/\d+" (\d+)/g)].map((m) => m[1]);
    expect(others).toEqual(['22', '24']);
    for (const major of others) expect(paragraph).toContain(`Node ${major}`);
  });

  it('docs/architecture.md names every folder of src/, written `name/`, and every file at its top', () => {
    const architecture = read('docs/architecture.md');
    const units = readdirSync(join(ROOT, 'src'), { withFileTypes: true })
      .filter((entry) => entry.isDirectory() || entry.name.endsWith('.ts'))
      .map((entry) => (entry.isDirectory() ? `${entry.name}/` : entry.name));
    expect(
      units.filter((unit) => !architecture.includes(`\`${unit}\``)),
      'say in a line of docs/architecture.md, "The pipeline", what each of these holds',
    ).toEqual([]);
  });

  it('names no document users cannot open (the steering documents are not in the repository)', () => {
    for (const document of DOCUMENTS) {
      expect(read(document), document).not.toMatch(/PROJECTION\.md|service-api\.md|\/work\//);
    }
  });

  it('no source, test, benchmark or migration cites a steering document or an issue number, which users do not have', () => {
    // The files the repository holds: not the scratch of a local run (bench/tmp keeps copies of dist/).
    const files = execFileSync('git', ['ls-files', 'src', 'test', 'bench', 'migrations', 'scripts', 'fixtures'], {
      cwd: ROOT,
      encoding: 'utf8',
    })
      .split('\n')
      .filter((file) => /\.(ts|mjs|js|sql|md)$/.test(file));
    const citing = files.filter(
      (file) => /PROJECTION\.md|STYLE\.md|service-api\.md|\b[Ii]ssues? #?\d/.test(read(file)) && file !== 'test/e2e/docs.test.ts',
    );
    expect(citing).toEqual([]);
  });
});
