import ChatModel
import ListDiff

/// The batches that take the rows a client shows (`known`) to a subscription's current list
/// (docs/PROTOCOL.md, The live feed, "Resume with what the client has").
///
/// A chat whose known revision equals its current one has not changed its order key, so only the
/// chats whose revision differs may move (the move rule of docs/PROTOCOL.md, Applying a batch among them). Known chats that
/// are not in the current list (removed from the store, out of the window) are deletes; current
/// chats the client does not show are inserts; chats that stay and whose revision differs get
/// their current content in the deferred pure-update batch.
///
/// A client whose rows contradict the list — two chats with unchanged revisions in the wrong
/// relative order, as rows persisted at different moments can be — cannot be caught up by moving
/// only the changed chats. Then every shown chat may move: the batches are the blind diff's
/// (fewest moves, upward-preferred), still valid for UIKit and still ending at the current list.
public struct ResumeDiff: Sendable {
    /// None, a structural batch, a pure-update batch, or a structural batch and its deferred
    /// pure-update batch (indices in the current list), in the order to apply them.
    public var batches: [Batch<Chat>]
    /// False when `known` contradicted the current order and every shown chat was allowed to move.
    public var knownWasConsistent: Bool

    /// The diff of `known` (distinct ids, the client's order) into `current` (the subscription's
    /// list).
    ///
    /// - Throws: `ChatError.invalidParams` naming the id when `known` holds an id twice.
    /// - Complexity: O((k + n) log(k + n)) for k known rows and n current rows.
    public init(known: [KnownRow], current: [Chat]) throws(ChatError) {
        let old = known.map { ResumeRow(id: $0.id, revision: $0.revision, chat: nil) }
        let new = current.map { ResumeRow(id: $0.id, revision: $0.revision, chat: $0) }
        var knownRevision = [String: Int64](minimumCapacity: known.count)
        for (position, row) in known.enumerated() where knownRevision.updateValue(row.revision, forKey: row.id) != nil {
            let first = known.firstIndex { $0.id == row.id }!
            throw .invalidParams(
                field: "known", reason: "holds the id \"\(row.id)\" twice (rows \(first) and \(position)); ids must be distinct")
        }
        var revisionChanged = Set<String>()
        for chat in current {
            if let revision = knownRevision[chat.id], revision != chat.revision { revisionChanged.insert(chat.id) }
        }
        let result: ListDiffResult<ResumeRow>
        do {
            result = try ListDiffer.diff(from: old, to: new, orderKeyChanged: revisionChanged)
            knownWasConsistent = true
        } catch {
            // Ids are distinct on both sides, so the only failure left is a contradictory order.
            result = (try? ListDiffer.diff(from: old, to: new)) ?? ListDiffResult(structural: nil, updates: nil)
            knownWasConsistent = false
        }
        // Inserted and updated rows come from `current`, so each has its chat.
        batches = result.batches.map { $0.mapItems { $0.chat! } }
    }
}

/// A row on either side of a resume diff: a known row has no chat, a current row has its chat.
struct ResumeRow: DiffableItem {
    var id: String
    var revision: Int64
    var chat: Chat?
}
