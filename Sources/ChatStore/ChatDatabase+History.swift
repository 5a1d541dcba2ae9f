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

/// Where a message goes in its chat's chain.
struct ChainPlacement {
    /// The message it follows (nil: it is the chat's first).
    var previous: Int64?
    /// The message that follows it (nil: it is the chat's newest, its `head`); its `previous`
    /// becomes the posted message.
    var successor: Int64?
    /// True when no message after it is a message not deleted: it is the chat's last message.
    var isLast = true
}

/// A chat's history is a chain, not an index: each message holds the `seq` of the one before it
/// (`message.previous`), the chat's memberships its two ends (`HistoryEnds`). A post in order
/// (after the chat's newest message, as nearly every post is) then writes no page of the chat's
/// own but its memberships' — an index by (chat, sentAt, id) put each post in a leaf of its chat,
/// a second random page a post. A position by date (`messages(chat:before:)`, a late post) is
/// found by a walk: from the first of the chat's marks after it (`message_mark`, every message
/// whose `seq` is a multiple of `markInterval`), or from the chat's newest message when none is.
extension ChatDatabase {
    /// One message in `markInterval` (by `seq`, wherever it goes in its chat) is a mark: a walk
    /// passes about that many messages on average, whatever the length of the chat or where its
    /// late posts go (every `markInterval`th of them is a mark too; posts that all go before a
    /// chat's first mark walk up to twice as far until one of them is one:
    /// `ChatHistoryTests`). A mark costs a post a random page once in that many posts.
    /// Migration 13 marks the messages by it: a change is a migration.
    static let markInterval: Int64 = 256

    func chainLink(_ seq: Int64) throws -> ChainLink {
        chainSteps += 1
        guard let link = try statements.chainLink.fetchOne(seq, decode: { row in
            ChainLink(sentAt: row[0], id: row[1], isDeleted: row[2], previous: row[3])
        }) else {
            throw SQLiteError(extendedResultCode: .corrupt, message: "message \(seq) of a chat's chain is missing")
        }
        return link
    }

    /// Where a message at `position` goes in the chain of chat `chatID`, whose newest message
    /// is `head`, and whose last one is `last` (`isLast` is left true without it).
    ///
    /// - Complexity: O(log m) for the mark, then O(k) seeks for the k messages between the
    ///   position and the mark after it (or the newest message): about `markInterval` at most
    ///   on average.
    func placement(of position: MessagePosition, chat chatID: String, head: Int64?, last: Int64? = nil) throws -> ChainPlacement {
        var placement = ChainPlacement(previous: head, successor: nil)
        if head != nil, let mark = try statements.markAfter.fetchValue(Int64.self, chatID, position.sentAt, position.id) {
            placement.previous = mark
        }
        while let seq = placement.previous {
            let link = try chainLink(seq)
            if !link.isAfter(position) { break }
            placement.successor = seq
            placement.previous = link.previous
        }
        if let last { placement.isLast = !(try chainLink(last).isAfter(position)) }
        return placement
    }

    /// Marks the message `seq` when it is one (`markInterval`).
    func markIfDue(_ message: Message, seq: Int64) throws {
        if seq % Self.markInterval == 0 { try statements.insertMark.execute(message.chat, message.sentAt, message.id, seq) }
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
                cursor = try placement(of: bound, chat: chatID, head: ends.head).previous
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

    /// Deletes every message of chat `chatID`, whose chain starts at `head`, and its marks.
    ///
    /// - Complexity: O(messages of the chat).
    func deleteHistory(chat chatID: String, head: Int64?) throws {
        try db.cachedStatement("DELETE FROM message_mark WHERE chat_id = ?1").execute(chatID)
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
