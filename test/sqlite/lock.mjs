// Holds a SQLite file from another process for a while, as a long migration
// or a maintenance job would: one EXCLUSIVE transaction with a write in it.
// In WAL mode that holds the write lock (readers go on); in rollback-journal
// mode no other connection may even read. Runs in Node 22 or later
// (node:sqlite).
//   usage: node lock.mjs <database file> <milliseconds>
// Prints `locked` once it holds the lock, and `unlocking` 50 ms before it
// lets go, so the caller knows no other write can have landed before that line.
import { DatabaseSync } from 'node:sqlite';

const [file, ms] = process.argv.slice(2);
const database = new DatabaseSync(file);
database.exec('BEGIN EXCLUSIVE');
database.exec('CREATE TABLE IF NOT EXISTS lock_holder (at REAL); INSERT INTO lock_holder VALUES (julianday())');
console.log('locked');
setTimeout(
  () => {
    console.log('unlocking');
    setTimeout(() => {
      database.exec('COMMIT');
      database.close();
    }, 50);
  },
  Number(ms) - 50,
);
