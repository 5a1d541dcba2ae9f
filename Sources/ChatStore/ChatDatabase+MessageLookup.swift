import ChatModel

extension ChatDatabase {
    /// The chat and sender of a message that is not deleted; nil when there is none (the rights
    /// of a gateway session to edit or delete it).
    /// - Complexity: O(log m) for m messages (the primary key).
    public func messageOwner(id: String) throws -> (chat: String, sender: String)? {
        try db.cachedStatement("SELECT chat_id, sender FROM message WHERE id = ?1 AND deleted = 0").fetchOne(id) { row in
            (chat: row[0], sender: row[1])
        }
    }
}
