import ChatModel

extension ChatDatabase {
    /// How a query reaches a user's memberships.
    enum MembershipAccess {
        /// Through the `membership_user` index, each row then looked up in the table.
        case index
        /// By one scan of the whole table in storage order: a third of the cost of a lookup a row
        /// (0.12 s against 0.36–0.40 s for 1,000,000 memberships; a page of such a list 0.14–0.16 s
        /// against 0.48–0.58 s), so the faster for a user who holds more than a third of all
        /// memberships, as the one user of a single-account store.
        case scan

        /// The term that selects the memberships of the user in parameter `parameter` (`?1`):
        /// with `+`, SQLite takes no index for it. (`NOT INDEXED` is not enough: SQLite 3.40
        /// still searches `membership_user` for a table WITHOUT ROWID.)
        func user(_ parameter: String) -> String {
            switch self {
            case .index: "user_id = \(parameter)"
            case .scan: "+user_id = \(parameter)"
            }
        }
    }

    /// How to reach a user's `count` memberships (a list, or both): by a scan when they are more
    /// than a third of all memberships (`store_count.memberships`, kept by triggers). O(1).
    func membershipAccess(count: Int) throws -> MembershipAccess {
        let all = try db.cachedStatement("SELECT memberships FROM store_count WHERE id = 0").fetchValue(Int.self) ?? 0
        return count * 3 > all ? .scan : .index
    }

    /// A user's memberships as `allChats(of:)` reads them, in no order.
    static func membershipsSQL(_ access: MembershipAccess) -> String {
        """
        SELECT chat_id, unread, revision, list, pin_order, muted, chat_rowid, last_message_date FROM membership
        WHERE \(access.user("?1"))
        """
    }

    /// Puts a user's chats, read in storage order, in list order: the `archive` list, then
    /// `main` (as SQL's `ORDER BY list`), each by `ChatOrderKey` (pin band, then date, then id).
    /// `rowIDs`, when not empty, holds one entry per chat and follows its chat.
    ///
    /// The store keeps no index in that order: its date changes with every post, and an index
    /// entry that moved with it cost a post two pages for each member (schema version 11). So the
    /// order is made here: 24-byte keys are sorted, not the chats (ids are compared only between
    /// chats of the same band and date), then each chat is moved into place once, swapped along
    /// the cycles of the permutation.
    ///
    /// - Complexity: O(c log c) for c chats.
    static func putInListOrder(_ chats: inout [Chat], rowIDs: inout [Int64?]) {
        precondition(rowIDs.isEmpty || rowIDs.count == chats.count)
        struct Key {
            var pinOrder: Int64
            var lastMessageDate: Int64
            var slot: Int32
            var archived: Bool
        }
        var keys: [Key] = []
        keys.reserveCapacity(chats.count)
        for slot in chats.indices {
            keys.append(Key(
                pinOrder: chats[slot].pinOrder, lastMessageDate: chats[slot].lastMessageDate, slot: Int32(slot),
                archived: chats[slot].list == .archive))
        }
        // `ChatOrderKey.<` on the keys, the archive list first.
        keys.sort { a, b in
            if a.archived != b.archived { return a.archived }
            if a.pinOrder != b.pinOrder { return a.pinOrder > b.pinOrder }
            if a.lastMessageDate != b.lastMessageDate { return a.lastMessageDate > b.lastMessageDate }
            return bytewiseLess(chats[Int(a.slot)].id, chats[Int(b.slot)].id)
        }
        // Position p takes the chat of slot `keys[p].slot`: follow each cycle of that permutation
        // from its first position, swapping the next chat of the cycle into place.
        var placed = [Bool](repeating: false, count: chats.count)
        for start in chats.indices where !placed[start] {
            var position = start
            while true {
                placed[position] = true
                let next = Int(keys[position].slot)
                if next == start { break }
                chats.swapAt(position, next)
                if !rowIDs.isEmpty { rowIDs.swapAt(position, next) }
                position = next
            }
        }
    }
}
