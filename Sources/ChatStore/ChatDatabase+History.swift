import ChatModel
import SQLite

/// Where a chat's chain of messages starts (schema version 13): the `seq` of its newest message
/// by (sentAt, id), deleted or not (`head`), and of its last message, the newest not deleted
/// (`last`); nil for a chat without messages.
struct HistoryEnds: Equatable {
    var head: Int64?
    var last: Int64?
}

/// One message as its chat's chain holds it.
struct ChainLink {
    var sentAt: Int64
    var id: String
    var isDeleted: Bool
    /// The `seq` of the message before it in its chat by (sentAt, id), deleted or not.
    var previous: Int64?

    /// True when it comes after `position` in its chat's order (sentAt, then id bytewise).
    func isAfter(_ position: MessagePosition) -> Bool {
        sentAt > position.sentAt || (sentAt == position.sentAt && bytewiseLess(position.id, id))
    }
}

/// Where a posted message goes in its chat's chain.
struct ChainPlacement {
    /// The message it follows (nil: it is the chat's first).
    var previous: Int64?
    /// The message that follows it (nil: it is the chat's newest, its `head`); its `previous`
    /// becomes the posted message.
    var successor: Int64?
    /// True when no message after it is a message not deleted: it is the chat's last message.
    var isLast: Bool
}

/// A chat's history is a chain, not an index: each message holds the `seq` of the one before it
/// (`message.previous`), the chat's memberships its two ends (`HistoryEnds`). A post in order
/// (after the chat's newest message, as nearly every post is) then writes no page of the chat's
/// own but its memberships' — an index by (chat, sentAt, id) put each post in a leaf of its chat,
/// a second random page a post. The price is paid by the rare reads that seek a position by
/// date (`messages(chat:before:)`, a late post), which walk the chain.
extension ChatDatabase {
    func chainLink(_ seq: Int64) throws -> ChainLink {
        guard let link = try statements.chainLink.fetchOne(seq, decode: { row in
            ChainLink(sentAt: row[0], id: row[1], isDeleted: row[2], previous: row[3])
        }) else {
            throw SQLiteError(extendedResultCode: .corrupt, message: "message \(seq) of a chat's chain is missing")
        }
        return link
    }

    /// Where a message at `position` goes in the chain that starts at `head`.
    ///
    /// - Complexity: O(1) after the newest message; O(k) seeks k messages back.
    func placement(of position: MessagePosition, head: Int64?) throws -> ChainPlacement {
        var placement = ChainPlacement(previous: head, successor: nil, isLast: true)
        while let seq = placement.previous {
            let link = try chainLink(seq)
            if !link.isAfter(position) { break }
            if !link.isDeleted { placement.isLast = false }
            placement.successor = seq
            placement.previous = link.previous
        }
        return placement
    }

    /// The first message not deleted from `seq` back (`seq` itself included).
    ///
    /// - Complexity: O(1 + deleted messages passed) seeks.
    func firstNotDeleted(from seq: Int64?) throws -> Int64? {
        var cursor = seq
        while let current = cursor {
            let link = try chainLink(current)
            if !link.isDeleted { return current }
            cursor = link.previous
        }
        return nil
    }

    /// Up to `limit` non-deleted messages of a chat, newest first, from those after `bound`
    /// (exclusive) when given.
    ///
    /// A bound that is a message of the chat at its position (the last of a page before)
    /// continues from that message's predecessor; any other bound is found by a walk from the
    /// newest message.
    ///
    /// - Complexity: O(limit + deleted messages passed) seeks from a message's position; O(k)
    ///   more for a bound k messages back otherwise.
    func historyPage(chat chatID: String, ends: HistoryEnds, after bound: MessagePosition?, limit: Int) throws -> [Message] {
        var cursor = ends.last
        if let bound {
            if let stored = try fetchStoredMessage(id: bound.id), stored.chatID == chatID, stored.sentAt == bound.sentAt {
                cursor = stored.previous
            } else {
                cursor = try placement(of: bound, head: ends.head).previous
            }
        }
        var items: [Message] = []
        let fetch = statements.chainMessage
        while let seq = cursor, items.count < limit {
            guard let (message, isDeleted, previous) = try fetch.fetchOne(seq, decode: { row in
                (Message(id: row[0], chat: row[1], sender: row[2], text: row[3], sentAt: row[4], editedAt: row[5]),
                 row[6] as Bool, row[7] as Int64?)
            }) else {
                throw SQLiteError(extendedResultCode: .corrupt, message: "message \(seq) of chat '\(chatID)''s chain is missing")
            }
            if !isDeleted { items.append(message) }
            cursor = previous
        }
        return items
    }

    /// Deletes every message of the chain that starts at `head`.
    ///
    /// - Complexity: O(messages of the chat).
    func deleteHistory(head: Int64?) throws {
        guard let head else { return }
        try db.cachedStatement("""
            WITH RECURSIVE chain(seq) AS (
                SELECT ?1
                UNION ALL
                SELECT message.previous FROM chain JOIN message ON message.seq = chain.seq WHERE message.previous IS NOT NULL)
            DELETE FROM message WHERE seq IN chain
            """).execute(head)
    }
}
