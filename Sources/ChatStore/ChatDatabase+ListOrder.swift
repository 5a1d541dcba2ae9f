import Dispatch
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

    /// A user's memberships as `allChats(of:)` reads them: in the order of the index or of the
    /// table, whichever is read (no sort), so by id within each list and pin order.
    static func membershipsSQL(_ access: MembershipAccess) -> String {
        """
        SELECT chat_id, unread, revision, list, pin_order, muted, chat_rowid, last_message_date FROM membership
        WHERE \(access.user("?1")) \(access == .index ? "ORDER BY list, pin_order DESC, chat_id" : "ORDER BY chat_id")
        """
    }

    /// A membership as `allChats(of:)` reads it: what its chat row shows but the chat's content,
    /// and the rowid hint of its chat row. 72 bytes, against a `Chat`'s 160.
    struct LoadedMembership {
        var id: String
        var unread: Int64
        var revision: Int64
        var pinOrder: Int64
        var lastMessageDate: Int64
        var rowID: Int64?
        var list: ChatList
        var muted: Bool
    }

    /// `memberships` as chats in list order: the `archive` list, then `main` (as SQL's `ORDER BY
    /// list`), each by `ChatOrderKey` (pin band, then date, then id), without their content; and,
    /// when `withRowIDs`, each chat's rowid hint. The memberships of each list and pin order must
    /// come by id (bytewise), as `membershipsSQL` reads them.
    ///
    /// The store keeps no index in that order: its date changes with every post, and an index
    /// entry that moved with it cost a post two pages for each member (schema version 11). So the
    /// order is made here, in two phases:
    ///
    /// 1. Sort 16-byte keys: list, pin band and date packed in one integer when they fit (a pin
    ///    order below 2¹⁵, a date in [0, 2⁴⁸): milliseconds until the year 10889), sorted by a
    ///    stable radix sort (a comparison sort of 1,000,000 took 0.23 s), so that chats of the
    ///    same list, pin order and date keep their order by id; otherwise by comparisons.
    /// 2. Build the chats in that order, each from its membership: a gather, whose reads do not
    ///    wait for one another (moving 160-byte chats along the permutation's cycles, each step
    ///    waiting for the last, cost a fifth of a 1,000,000-chat start-up).
    ///
    /// - Complexity: O(c) for c chats whose keys pack, O(c log c) otherwise.
    static func inListOrder(
        _ memberships: [LoadedMembership], withRowIDs: Bool
    ) -> (chats: [Chat], rowIDs: [Int64?]) {
        struct Key {
            var packed: UInt64
            var slot: UInt32
        }
        let dateLimit: Int64 = 1 << 48, pinLimit: Int64 = 1 << 15
        let packs = memberships.allSatisfy {
            $0.lastMessageDate >= 0 && $0.lastMessageDate < dateLimit && $0.pinOrder >= 0 && $0.pinOrder < pinLimit
        }
        var keys: [Key] = []
        keys.reserveCapacityInHugePages(memberships.count)
        for slot in memberships.indices {
            let membership = memberships[slot]
            // Ascending packed order is list order: archive (0) before main (1), the highest pin
            // order first, the latest date first.
            let packed = packs
                ? UInt64(membership.list == .archive ? 0 : 1) << 63
                    | UInt64(pinLimit - 1 - membership.pinOrder) << 48 | UInt64(dateLimit - 1 - membership.lastMessageDate)
                : 0
            keys.append(Key(packed: packed, slot: UInt32(slot)))
        }
        if packs {
            // Equal packed keys (the same list, pin and date) stay in slot order, which is by id:
            // the radix sort is stable. (Comparing ids instead, at random places of
            // `memberships`, took 0.08 s for the 400,000 chats that share a date with another in
            // a list of 1,000,000.) A radix sort's histograms outweigh a comparison below a few
            // thousand keys.
            if keys.count >= 4_096 {
                radixSort(&keys, by: \.packed)
            } else {
                keys.sort { $0.packed != $1.packed ? $0.packed < $1.packed : $0.slot < $1.slot }
            }
        } else {
            // `ChatOrderKey.<` on the memberships, the archive list first (ids compared too,
            // though they come in order: this path is for keys that do not pack).
            keys.sort { a, b in
                let x = memberships[Int(a.slot)], y = memberships[Int(b.slot)]
                if x.list != y.list { return x.list == .archive }
                if x.pinOrder != y.pinOrder { return x.pinOrder > y.pinOrder }
                if x.lastMessageDate != y.lastMessageDate { return x.lastMessageDate > y.lastMessageDate }
                return bytewiseLess(x.id, y.id)
            }
        }
        // Phase 2, in two halves on two threads for a large list: the gather waits on memory,
        // and the first writes of the new chats on the kernel's zeroing of their pages.
        let sorted = keys
        let halves = sorted.count >= 65_536 ? 2 : 1
        let chats = [Chat](inHugePagesCount: sorted.count) { chats in
            // Each half initializes its own positions of the buffer, which outlives both.
            nonisolated(unsafe) let buffer = chats
            DispatchQueue.concurrentPerform(iterations: halves) { half in
                let end = sorted.count * (half + 1) / halves
                for position in sorted.count * half / halves..<end {
                    let membership = memberships[Int(sorted[position].slot)]
                    (buffer.baseAddress! + position).initialize(to: Chat(
                        id: membership.id, title: "", createdAt: 0, lastMessage: nil,
                        lastMessageDate: membership.lastMessageDate, unread: membership.unread,
                        revision: membership.revision, list: membership.list, pinOrder: membership.pinOrder,
                        muted: membership.muted))
                }
            }
        }
        let rowIDs = withRowIDs ? sorted.map { memberships[Int($0.slot)].rowID } : []
        return (chats, rowIDs)
    }

    /// Sorts `elements` by `key`, stably: a least-significant-digit radix sort, 11 bits a pass
    /// (2,048 buckets, whose write positions stay in the cache), a pass skipped when every
    /// element has the same digit: 2 passes for 1,000,000 dates in milliseconds within 24 days.
    ///
    /// - Complexity: O(n) for n elements (at most 6 passes), and a second buffer of n.
    static func radixSort<Element>(_ elements: inout [Element], by key: (Element) -> UInt64) {
        let bits = 11, buckets = 1 << 11
        var source: [Element] = []
        swap(&source, &elements)
        var target: [Element] = []
        target.reserveCapacityInHugePages(source.count)
        target.append(contentsOf: source)
        var counts = [Int](repeating: 0, count: buckets)
        for shift in stride(from: 0, to: 64, by: bits) {
            for index in counts.indices { counts[index] = 0 }
            for element in source { counts[Int(truncatingIfNeeded: key(element) >> UInt64(shift)) & (buckets - 1)] += 1 }
            if counts.contains(source.count) { continue }
            var offset = 0
            for index in counts.indices {
                let count = counts[index]
                counts[index] = offset
                offset += count
            }
            source.withUnsafeBufferPointer { source in
                target.withUnsafeMutableBufferPointer { target in
                    for element in source {
                        let digit = Int(truncatingIfNeeded: key(element) >> UInt64(shift)) & (buckets - 1)
                        target[counts[digit]] = element
                        counts[digit] += 1
                    }
                }
            }
            swap(&source, &target)
        }
        elements = source
    }
}
