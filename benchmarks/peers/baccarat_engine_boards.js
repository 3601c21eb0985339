// Runs under node: full boards with the npm package baccarat-engine (1.1.5), one shoe at a time.
//
// Usage: node baccarat_engine_boards.js SHOES_FILE RUNS
// SHOES_FILE holds one outcome string (B/P/T) per line. Output (stdout, JSON): the coups/s of
// every run and, per shoe, the three derived-road strings (R/B) of the last run, for checking.
// The package truncates by default: the Bead Plate gets ceil(n/6) columns and the Big Road
// {rows: 6, scroll: false}, so every road is drawn in full. It has no ask road.
'use strict';

const fs = require('fs');
const path = require('path');

const root = path.resolve(process.env.BACCARAT_ENGINE_DIR);
const RoadmapGenerator = require(path.join(root, 'src', 'roadmaps', 'roadmapGenerator'));

const OUTCOME = {B: 'banker', P: 'player', T: 'tie'};

function board(generator, results) {
  const beadPlate = generator.beadPlate(results, {columns: Math.ceil(results.length / 6), rows: 6});
  const bigRoad = generator.bigRoad(results, {rows: 6, scroll: false});
  return [beadPlate, bigRoad, generator.bigEyeRoad(bigRoad), generator.smallRoad(bigRoad),
    generator.cockroachPig(bigRoad)];
}

function main() {
  const shoes = fs.readFileSync(process.argv[2], 'utf8').split(/\s+/).filter((s) => s.length);
  const runs = Number(process.argv[3] || 3);
  // The game results, as the package's own GameResult objects would carry them, are made once:
  // the timed part is drawing the roads, as for the other tools.
  const games = shoes.map((s) => Array.from(s, (ch) => ({outcome: OUTCOME[ch]})));
  const coups = shoes.reduce((n, s) => n + s.length, 0);
  const generator = new RoadmapGenerator();
  const rates = [];
  let boards = [];
  for (let r = 0; r < runs; r += 1) {
    const start = process.hrtime.bigint();
    boards = games.map((results) => board(generator, results));
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    rates.push(coups / seconds);
  }
  const roads = boards.map((b) => b.slice(2).map(
      (marks) => marks.map((colour) => (colour === 'red' ? 'R' : 'B')).join('')));
  process.stdout.write(JSON.stringify({coups_per_second: rates, roads: roads}));
}

main();
