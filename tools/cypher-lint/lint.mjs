// Lint Cypher statements with Neo4j's own language support (@neo4j-cypher/language-support).
//
// usage:  node lint.mjs [CYPHER_VERSION ...]     (default: every version the package knows)
// stdin:  {"statements": {"NAME": "MATCH ..."}, "schema": {labels, relationshipTypes, propertyKeys, parameters}}
// stdout: {"package": ..., "version": ..., "cypherVersions": [checked], "allCypherVersions": [...],
//          "diagnostics": {"NAME": [{cypherVersion, severity, message, line, character}]}}
//
// Each statement is checked under each Cypher version asked for ("CYPHER 5", "CYPHER 25"): syntax,
// semantics (undefined variables, type errors), and our schema: labels, relationship types,
// property keys and parameters that are not declared are reported. Functions and procedures
// are checked against the Neo4j catalogue the package ships (testData.mockSchema, recorded from
// a real server), so a function Neo4j does not have is reported too. Nothing is filtered here:
// the caller decides what fails. Exits non-zero only when it cannot run at all.
//
// Only the catalogue entries whose name occurs in the statements are passed on: the outcome is
// the same (a name that is not in the catalogue is still missing), and the package re-serialises
// the whole catalogue on every call, which made the run much slower.
import { readFileSync } from 'node:fs';
import { allCypherVersions, lintCypherQuery, testData } from '@neo4j-cypher/language-support';

const SEVERITY = { 1: 'error', 2: 'warning', 3: 'information', 4: 'hint' };

function readPackageVersion() {
  const url = new URL('./node_modules/@neo4j-cypher/language-support/package.json', import.meta.url);
  return JSON.parse(readFileSync(url, 'utf8')).version;
}

function lineColumn(text, offset) {
  const before = text.slice(0, offset).split('\n');
  return { line: before.length, character: before[before.length - 1].length + 1 };
}

// Catalogue entries (functions or procedures, per Cypher version) named somewhere in `texts`.
function mentioned(registry, texts) {
  const words = new Set(texts.join(' ').toLowerCase().match(/[a-z_][\w.]*/g) ?? []);
  const keep = (entries) =>
    Object.fromEntries(Object.entries(entries).filter(([name]) => words.has(name.toLowerCase())));
  return Object.fromEntries(Object.entries(registry).map(([version, entries]) => [version, keep(entries)]));
}

const versions = process.argv.length > 2 ? process.argv.slice(2) : allCypherVersions;
for (const version of versions) {
  if (!allCypherVersions.includes(version)) {
    process.stderr.write(`unknown Cypher version ${JSON.stringify(version)}; known: ${allCypherVersions}\n`);
    process.exit(2);
  }
}

const input = JSON.parse(readFileSync(0, 'utf8'));
const { statements, schema } = input;
const texts = Object.values(statements);
const functions = mentioned(testData.mockSchema.functions, texts);
const procedures = mentioned(testData.mockSchema.procedures, texts);
const diagnostics = {};
for (const [name, text] of Object.entries(statements)) {
  diagnostics[name] = [];
  for (const cypherVersion of versions) {
    const dbSchema = {
      labels: schema.labels,
      relationshipTypes: schema.relationshipTypes,
      propertyKeys: schema.propertyKeys,
      parameters: schema.parameters,
      functions,
      procedures,
      defaultLanguage: cypherVersion,
    };
    for (const found of lintCypherQuery(text, dbSchema).diagnostics) {
      diagnostics[name].push({
        cypherVersion,
        severity: SEVERITY[found.severity] ?? String(found.severity),
        message: found.message,
        ...lineColumn(text, found.offsets?.start ?? 0),
      });
    }
  }
}

process.stdout.write(
  JSON.stringify({
    package: '@neo4j-cypher/language-support',
    version: readPackageVersion(),
    cypherVersions: versions,
    allCypherVersions,
    diagnostics,
  }),
);
