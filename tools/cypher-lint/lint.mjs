// Lint Cypher statements with Neo4j's own language support (@neo4j-cypher/language-support).
//
// stdin:  {"statements": {"NAME": "MATCH ..."}, "schema": {labels, relationshipTypes, propertyKeys, parameters}}
// stdout: {"package": ..., "version": ..., "cypherVersions": [...],
//          "diagnostics": {"NAME": [{cypherVersion, severity, message, line, character}]}}
//
// Each statement is checked under every Cypher version the package knows (5 and 25): syntax,
// semantics (undefined variables, type errors), and our schema: labels, relationship types,
// property keys and parameters that are not declared are reported. Functions and procedures
// are checked against the Neo4j catalogue the package ships (testData.mockSchema, recorded from
// a real server), so a function Neo4j does not have is reported too. Nothing is filtered here:
// the caller decides what fails. Exits non-zero only when it cannot run at all.
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

const input = JSON.parse(readFileSync(0, 'utf8'));
const { statements, schema } = input;
const diagnostics = {};
for (const [name, text] of Object.entries(statements)) {
  diagnostics[name] = [];
  for (const cypherVersion of allCypherVersions) {
    const dbSchema = {
      labels: schema.labels,
      relationshipTypes: schema.relationshipTypes,
      propertyKeys: schema.propertyKeys,
      parameters: schema.parameters,
      functions: testData.mockSchema.functions,
      procedures: testData.mockSchema.procedures,
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
    cypherVersions: allCypherVersions,
    diagnostics,
  }),
);
