// chatfeed's list model for the browser: a keyed list of chats and the batches that change it,
// under the rules of the Swift UIKitBatchModel (Sources/ListDiff/UIKitBatchModel.swift; the rules
// are docs/PROTOCOL.md, "Applying a batch"). No DOM here: tests run it alone, on the cases both
// test suites share (Tests/Fixtures/batch-cases.json).

/** A rule a batch can break: the Swift `BatchRule` case names and their texts, in checking order. */
export const BatchRule = Object.freeze({
  indexOutOfRange: "every index is in range",
  duplicateIndex: "no index twice in one list",
  deletesNotDescending: "deletes are in descending order",
  insertsNotAscending: "inserts are in ascending order",
  deleteAndUpdate: "no row is both deleted and updated",
  deleteAndMove: "no row is both deleted and moved",
  moveAndUpdate: "no row is both moved and updated",
  insertAndMoveToSameIndex: "no insert and move to the same index",
  updatesInStructuralBatch: "updates never share a batch with deletes, inserts or moves",
  // Rules of a keyed list beyond UIKit's (UIKit would draw such a list; a keyed one cannot).
  duplicateId: "no chat id twice in the list",
  updateChangesId: "an update keeps its row's chat id",
  countMismatch: "the list has the rows the server counts",
  seqGap: "notifications arrive in seq order without gaps",
  malformed: "a notification has the protocol's shape",
});

/** A batch that UIKit would refuse (or that would corrupt the list), with the rule it breaks. */
export class BatchRuleViolation extends Error {
  /**
   * @param {keyof typeof BatchRule} rule the rule's name, as `BatchRule` spells it
   * @param {string} detail which entry broke it, e.g. "deletes[1] = 5 after 3"
   */
  constructor(rule, detail) {
    super(`batch breaks the rule '${BatchRule[rule]}': ${detail}`);
    this.name = "BatchRuleViolation";
    this.rule = rule;
    this.detail = detail;
  }
}

const isIndex = (value, count) => Number.isInteger(value) && value >= 0 && value < count;
const fail = (rule, detail) => { throw new BatchRuleViolation(rule, detail); };

/** Whether `batch` deletes, inserts or moves (a pure-update batch does none of these). */
export function isStructural(batch) {
  return batch.deletes.length > 0 || batch.inserts.length > 0 || batch.moves.length > 0;
}

/** A batch with its four arrays present (the wire always sends them; a hand-made batch may not). */
export function normalizeBatch(batch) {
  return {
    deletes: batch.deletes ?? [],
    inserts: batch.inserts ?? [],
    moves: batch.moves ?? [],
    updates: batch.updates ?? [],
  };
}

/**
 * Checks every rule for `batch` applied to a list of `rowCount` rows, in the order of
 * `UIKitBatchModel.validate`, so that both name the same first rule broken.
 *
 * @throws {BatchRuleViolation} naming the first rule broken.
 * Complexity: O(k) for k operations.
 */
export function validateBatch(batch, rowCount) {
  const { deletes, inserts, moves, updates } = normalizeBatch(batch);
  const oldCount = rowCount;
  const newCount = oldCount - deletes.length + inserts.length;

  deletes.forEach((index, position) => {
    if (!isIndex(index, oldCount)) fail("indexOutOfRange", `deletes[${position}] = ${index} with ${oldCount} rows`);
    if (position > 0) {
      const previous = deletes[position - 1];
      if (previous === index) fail("duplicateIndex", `delete ${index} appears twice`);
      if (previous < index) fail("deletesNotDescending", `deletes[${position}] = ${index} after ${previous}`);
    }
  });
  if (newCount < 0) fail("indexOutOfRange", "more deletes than rows");
  const deleted = new Set(deletes);

  const movedFrom = new Set();
  const movedTo = new Set();
  moves.forEach((move, position) => {
    if (!isIndex(move.from, oldCount)) fail("indexOutOfRange", `moves[${position}].from = ${move.from} with ${oldCount} rows`);
    if (!isIndex(move.to, newCount)) fail("indexOutOfRange", `moves[${position}].to = ${move.to} with ${newCount} rows after the batch`);
    if (movedFrom.has(move.from)) fail("duplicateIndex", `row ${move.from} is moved twice`);
    movedFrom.add(move.from);
    if (movedTo.has(move.to)) fail("duplicateIndex", `two moves go to index ${move.to}`);
    movedTo.add(move.to);
    if (deleted.has(move.from)) fail("deleteAndMove", `row ${move.from} is deleted and moved`);
  });

  inserts.forEach((insert, position) => {
    const index = insert.index;
    if (!isIndex(index, newCount)) fail("indexOutOfRange", `inserts[${position}] = ${index} with ${newCount} rows after the batch`);
    if (position > 0) {
      const previous = inserts[position - 1].index;
      if (previous === index) fail("duplicateIndex", `insert ${index} appears twice`);
      if (previous > index) fail("insertsNotAscending", `inserts[${position}] = ${index} after ${previous}`);
    }
    if (movedTo.has(index)) fail("insertAndMoveToSameIndex", `a row is inserted and moved to index ${index}`);
  });

  const updated = new Set();
  updates.forEach((update, position) => {
    const index = update.index;
    if (!isIndex(index, oldCount)) fail("indexOutOfRange", `updates[${position}] = ${index} with ${oldCount} rows`);
    if (updated.has(index)) fail("duplicateIndex", `update ${index} appears twice`);
    updated.add(index);
    if (deleted.has(index)) fail("deleteAndUpdate", `row ${index} is deleted and updated`);
    if (movedFrom.has(index)) fail("moveAndUpdate", `row ${index} is moved and updated`);
  });
  if (updates.length > 0 && isStructural({ deletes, inserts, moves })) {
    fail("updatesInStructuralBatch",
      `${updates.length} updates with ${deletes.length} deletes, ${inserts.length} inserts and ${moves.length} moves`);
  }
}

/**
 * Applies `batch` to `rows` as UIKit does and returns the new rows (`rows` is left as it was).
 * Structural batch: remove the rows at `deletes` and `moves[].from`, keep the rest in order, put
 * inserted and moved rows at their new indices and fill the other slots in order with the rows
 * left. Pure-update batch: replace the rows at `updates`. Inserted and updated rows are the
 * entries' `chat`.
 *
 * @throws {BatchRuleViolation} naming the first rule broken.
 * Complexity: O(n + k) for n rows and k operations.
 */
export function applyBatch(batch, rows) {
  const b = normalizeBatch(batch);
  validateBatch(b, rows.length);
  if (!isStructural(b)) {
    const result = rows.slice();
    for (const update of b.updates) result[update.index] = update.chat;
    return result;
  }
  const newCount = rows.length - b.deletes.length + b.inserts.length;
  const placed = new Array(newCount).fill(undefined);
  const removed = new Array(rows.length).fill(false);
  for (const index of b.deletes) removed[index] = true;
  for (const move of b.moves) {
    removed[move.from] = true;
    placed[move.to] = rows[move.from];
  }
  for (const insert of b.inserts) placed[insert.index] = insert.chat;
  let next = 0;
  const result = [];
  for (const slot of placed) {
    if (slot !== undefined) {
      result.push(slot);
      continue;
    }
    while (next < rows.length && removed[next]) next += 1;
    if (next < rows.length) result.push(rows[next++]);
  }
  return result;
}

/**
 * A keyed list of chats (each with a string `id` and an integer `revision`) that changes only by
 * whole batches under UIKit's rules, plus the rules a keyed list needs: no id twice, an update
 * keeps its row's id. A batch that breaks a rule changes nothing.
 */
export class ListModel {
  /** @param {Array<{id: string, revision: number}>} rows */
  constructor(rows = []) {
    ListModel.checkKeys(rows);
    this.rows = rows.slice();
  }

  /** Replaces every row (a snapshot or a reset). @throws {BatchRuleViolation} on a duplicate id. */
  replace(rows) {
    ListModel.checkKeys(rows);
    this.rows = rows.slice();
  }

  /**
   * Applies one batch. Returns what changed, for an animation: the chats deleted, inserted,
   * moved and updated (by id), with the rows before and after.
   *
   * @param {object} batch `deletes`, `inserts`, `moves`, `updates` as on the wire
   * @param {number} [expectedCount] the notification's `count`, checked against the rows after
   * @throws {BatchRuleViolation} and changes nothing when the batch does not apply.
   * Complexity: O(n + k).
   */
  apply(batch, expectedCount) {
    const b = normalizeBatch(batch);
    const before = this.rows;
    const after = applyBatch(b, before);
    b.updates.forEach((update, position) => {
      if (update.chat?.id !== before[update.index].id) {
        fail("updateChangesId", `updates[${position}] turns row ${update.index} '${before[update.index].id}' into '${update.chat?.id}'`);
      }
    });
    ListModel.checkKeys(after);
    if (expectedCount !== undefined && expectedCount !== after.length) {
      fail("countMismatch", `${after.length} rows after the batch, the server counts ${expectedCount}`);
    }
    this.rows = after;
    return {
      structural: isStructural(b),
      before,
      after,
      deleted: b.deletes.map((index) => before[index].id),
      inserted: b.inserts.map((insert) => insert.chat.id),
      moved: b.moves.map((move) => before[move.from].id),
      updated: b.updates.map((update) => update.chat.id),
    };
  }

  /** The rows as `feed.subscribe`'s `known`: `{id, revision}` in display order. */
  known() {
    return this.rows.map((row) => ({ id: row.id, revision: row.revision }));
  }

  static checkKeys(rows) {
    const seen = new Map();
    rows.forEach((row, index) => {
      if (typeof row?.id !== "string") fail("duplicateId", `row ${index} has no string id`);
      if (seen.has(row.id)) fail("duplicateId", `'${row.id}' is at ${seen.get(row.id)} and ${index}`);
      seen.set(row.id, index);
    });
  }
}
