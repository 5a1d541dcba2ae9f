import ChatModel
import ListDiff

/// The rows a subscriber shows — the list its last notification brought it to — as order keys
/// and revisions: 40 bytes a row, the ids sharing the index's storage.
///
/// A waiting subscription keeps these instead of an entry per changed chat once the chats
/// changed since its last batch cost more than its rows (docs/PROTOCOL.md, The live feed, "coalesce"): from then on an
/// event costs it nothing, and its next batch is computed from these rows to its current list,
/// as a resume from `known` is. Subscriptions of one view and window that were brought to the
/// same moment hold one shared buffer (the array is copy-on-write and never mutated).
struct ShownList {
    struct Row {
        /// The chat's order key when it was shown (its id is the row's id).
        var key: ChatOrderKey
        /// The revision of the content shown.
        var revision: Int64
    }

    /// In the subscriber's order.
    let rows: [Row]

    /// A row as the diff compares it: 24 bytes (a row holding its chat, even absent, is ten times
    /// that, and the arrays of a whole list's rows were each a fresh mapping of pages).
    struct DiffedRow: DiffableItem {
        var id: String
        var revision: Int64
    }

    /// The first `limit` rows (all when nil) of `view` as the subscriber last saw them: the
    /// current index with every chat of `known` (what the subscriber saw of each chat changed
    /// since) put back where it was.
    ///
    /// - Complexity: O(log n + r + d log d) for r rows and d known chats in a list of n.
    init(index: ChatIndex, view: ChatListView, known: [String: KnownChat], limit: Int?) {
        let rowCount = index.count(of: view)
        // An unchanged chat among the first `limit` rows then is among the first `limit + d` now.
        let scanned = limit.map { $0 > rowCount - known.count ? rowCount : $0 + known.count } ?? rowCount
        let wanted = min(limit ?? Int.max, scanned + known.count)
        var unchanged: [Row] = []
        unchanged.reserveCapacity(scanned)
        for key in index.keys(from: 0, count: scanned, in: view) where known[key.id] == nil {
            unchanged.append(Row(key: key, revision: index.revision(of: key.id)!))
        }
        var changed: [Row] = []
        changed.reserveCapacity(known.count)
        for was in known.values {
            if let chat = was.chat, view.contains(chat) { changed.append(Row(key: chat.orderKey, revision: chat.revision)) }
        }
        changed.sort { $0.key < $1.key }
        // Merge the two sorted runs, up to `wanted` rows.
        var rows: [Row] = []
        rows.reserveCapacity(min(wanted, unchanged.count + changed.count))
        var u = 0
        var c = 0
        while rows.count < wanted, u < unchanged.count || c < changed.count {
            if c == changed.count || (u < unchanged.count && unchanged[u].key < changed[c].key) {
                rows.append(unchanged[u])
                u += 1
            } else {
                rows.append(changed[c])
                c += 1
            }
        }
        self.rows = rows
    }

    /// The batches that take these rows to the first `count` rows of `view` now (all when
    /// fewer): only the chats whose order key changed may move (docs/PROTOCOL.md, Applying a
    /// batch), a row whose revision changed gets its current content in the deferred batch. The
    /// rows are compared by id, order key and revision, read in place; only the chats the
    /// batches carry are copied whole (their content read at once when the index lacks it).
    ///
    /// - Complexity: O((r + m) log(r + m)) for r rows shown and m current rows.
    func diff(to view: ChatListView, count: Int, in index: inout ChatIndex) -> (result: ListDiffResult<Chat>, newCount: Int) {
        var shownByID = [String: Row](minimumCapacity: rows.count)
        for row in rows { shownByID[row.key.id] = row }
        var keyChanged = Set<String>()
        let keys = index.keys(from: 0, count: count, in: view)
        var new: [DiffedRow] = []
        new.reserveCapacity(keys.count)
        for key in keys {
            let revision = index.revision(of: key.id)!
            if let row = shownByID[key.id], row.revision != revision, row.key != key { keyChanged.insert(key.id) }
            new.append(DiffedRow(id: key.id, revision: revision))
        }
        let old = rows.map { DiffedRow(id: $0.key.id, revision: $0.revision) }
        let result: ListDiffResult<DiffedRow>
        do {
            result = try ListDiffer.diff(from: old, to: new, orderKeyChanged: keyChanged)
        } catch {
            // Ids are distinct and unchanged keys keep their order in both lists, so this cannot
            // happen; the blind diff still brings the subscriber to the current rows.
            assertionFailure("the shown rows contradict the list: \(error)")
            result = (try? ListDiffer.diff(from: old, to: new)) ?? ListDiffResult(structural: nil, updates: nil)
        }
        // The inserted and updated rows, whole.
        var carried: [String] = []
        for batch in [result.structural, result.updates] {
            guard let batch else { continue }
            for item in batch.inserts { carried.append(item.item.id) }
            for item in batch.updates { carried.append(item.item.id) }
        }
        // Each carried row's chat, taken in the order `carried` listed them (a batch's inserts,
        // then its updates: `Batch.mapItems`'s order), moved out from the end of the reversed
        // chats: no dictionary of them (an id may be carried by both batches, once in each).
        var chats = index.chatsLoadingContent(ids: carried)
        chats.reverse()
        func take(_ row: DiffedRow) -> Chat {
            let chat = chats.popLast()!
            assert(chat.id == row.id, "the carried rows' chats out of order")
            return chat
        }
        let structural = result.structural?.mapItems(take)
        let updates = result.updates?.mapItems(take)
        return (ListDiffResult(structural: structural, updates: updates), keys.count)
    }
}
