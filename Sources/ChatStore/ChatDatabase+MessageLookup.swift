import ChatModel

extension ChatDatabase {
    /// The chat and sender of a message, and whether it was deleted; nil when there is none
    /// (the rights of a gateway session to edit or delete it: a retried delete of its own
    /// message is allowed, as for a trusted session).
    /// - Complexity: O(log m) for m messages (the primary key).
    public func messageOwner(id: String) throws -> (chat: String, sender: String, isDeleted: Bool)? {
        try db.cachedStatement("SELECT chat_id, sender, deleted FROM message WHERE id = ?1").fetchOne(id) { row in
            (chat: row[0], sender: row[1], isDeleted: row[2])
        }
    }
}
