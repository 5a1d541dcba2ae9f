import ChatModel
import Foundation
import SQLite
import Testing
import TestSupport

@testable import ChatStore

/// The store keeps no index in list order (schema version 11): a user's lists are sorted when
/// they are read. These tests hold the sort to SQLite's `ORDER BY`, both ways of reading the
/// memberships to each other, and a post to writing no index page.
@Suite struct ListOrderLoadTests {
    /// `inListOrder` on every small case: random memberships with ties of date and of pin order
    /// in both lists, by id as the store reads them, against `ChatOrderKey` after the archive
    /// list; the row ids follow their chats. Dates and pin orders that fit the packed key, and (one case in four) some that do
    /// not: a negative date, a date past 2⁴⁸, a pin order past 2¹⁵.
    @Test(arguments: [1, 2, 3] as [UInt64])
    func theSortPutsAnyMembershipsInListOrder(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        let prefixes = ["a", "b", "ab", "é", "a\u{0}"]
        let outsideDates: [Int64] = [-1, Int64.min, 1 << 48, Int64.max]
        let outsidePins: [Int64] = [1 << 15, Int64.max]
        for count in 0...9 {
            for round in 0..<200 {
                let outside = round % 4 == 3
                var memberships: [ChatDatabase.LoadedMembership] = []
                for index in 0..<count {
                    let pinned = Int.random(in: 0..<4, using: &random) == 0
                    var date = Int64.random(in: 0...2, using: &random)
                    var pin: Int64 = pinned ? Int64.random(in: 1...2, using: &random) : 0
                    if outside, Int.random(in: 0..<3, using: &random) == 0 {
                        if Bool.random(using: &random) { date = outsideDates.randomElement(using: &random)! }
                        else { pin = outsidePins.randomElement(using: &random)! }
                    }
                    memberships.append(ChatDatabase.LoadedMembership(
                        id: prefixes[index % 5] + "\(index / 5)", unread: Int64(index % 3), revision: Int64(index),
                        pinOrder: pin, lastMessageDate: date, rowID: index % 4 == 0 ? nil : Int64(index * 7),
                        list: Bool.random(using: &random) ? .main : .archive, muted: index % 2 == 0))
                }
                // In the order the store reads them: by id (bytewise).
                memberships.sort { bytewiseLess($0.id, $1.id) }
                let asChats = memberships.map {
                    Chat(
                        id: $0.id, title: "", createdAt: 0, lastMessage: nil, lastMessageDate: $0.lastMessageDate,
                        unread: $0.unread, revision: $0.revision, list: $0.list, pinOrder: $0.pinOrder, muted: $0.muted)
                }
                let archived: [Chat] = asChats.filter { $0.list == .archive }.sorted { $0.orderKey < $1.orderKey }
                let expected: [Chat] = archived + asChats.filter { $0.list == .main }.sorted { $0.orderKey < $1.orderKey }
                var rowIDOf: [String: Int64?] = [:]
                for membership in memberships { rowIDOf[membership.id] = membership.rowID }
                let sorted = ChatDatabase.inListOrder(memberships, withRowIDs: true)
                #expect(sorted.chats == expected, "\(memberships)")
                #expect(sorted.rowIDs == sorted.chats.map { rowIDOf[$0.id]! })
                let withoutRowIDs = ChatDatabase.inListOrder(memberships, withRowIDs: false)
                #expect(withoutRowIDs.chats == expected && withoutRowIDs.rowIDs.isEmpty)
            }
        }
    }

    /// The radix sort against the standard library's stable sort: random keys of 16, 32, 48 and
    /// 64 varying bits (ties among the first), and 70,000 memberships through `inListOrder` (where the
    /// radix sort takes over, and the chats are built in two halves) against `ChatOrderKey`.
    @Test func theRadixSortIsAStableSort() {
        var random = SeededGenerator(seed: 4)
        for digits in 1...4 {
            let mask: UInt64 = digits == 4 ? .max : (1 << UInt64(16 * digits)) - 1
            let keys = (0..<6_000).map { index in (key: UInt64.random(in: 0...UInt64.max, using: &random) & mask & ~0x3, index: index) }
            var sorted = keys
            ChatDatabase.radixSort(&sorted, by: \.key)
            var expected = keys
            expected.sort { $0.key < $1.key }  // stable
            #expect(sorted.map(\.key) == expected.map(\.key) && sorted.map(\.index) == expected.map(\.index), "\(digits) digits")
        }
        var memberships: [ChatDatabase.LoadedMembership] = []
        for index in 0..<70_000 {  // by id: `c000000`…`c069999`; two halves gathered apart
            memberships.append(ChatDatabase.LoadedMembership(
                id: "c" + String(index + 1_000_000).dropFirst(), unread: 0, revision: Int64(index),
                pinOrder: index % 500 == 0 ? Int64(index / 500) : 0,
                lastMessageDate: Int64.random(in: 1_700_000_000_000...1_700_000_000_400, using: &random), rowID: Int64(index),
                list: index % 3 == 0 ? .archive : .main, muted: false))
        }
        let chats = ChatDatabase.inListOrder(memberships, withRowIDs: true)
        let archived = chats.chats.prefix { $0.list == .archive }
        #expect(archived.count == 23_334)
        for (a, b) in zip(chats.chats, chats.chats.dropFirst()) where a.list == b.list {
            #expect(a.orderKey < b.orderKey, "\(a.orderKey) \(b.orderKey)")
        }
        #expect(chats.rowIDs == chats.chats.map { Int64?($0.revision) })
    }

    /// A user who holds most memberships is read by a scan of the table, one who holds few
    /// through the index: either way the lists, pages, counters and positions are those of
    /// SQLite's `ORDER BY` over the same rows. 15,000 chats of `me` (a fifth of them also
    /// `ann`'s), dates with ties, pins and both lists: `me`'s lists together and `me`'s `main`
    /// by a scan, `me`'s `archive` and `ann`'s lists through the index.
    @Test func aLargeListReadByAScanIsInTheOrderOfTheIndexedOne() throws {
        let files = try TestStore()
        let store = files.store
        var random = SeededGenerator(seed: 11)
        var events: [ChatEvent] = [.createUser(id: "ann", name: "Ann", createdAt: 0)]
        for i in 0..<15_000 {
            let id = "c\(i)"
            events.append(.createChat(id: id, title: id, createdAt: 0, members: i % 5 == 0 ? ["me", "ann"] : ["me"]))
            if Int.random(in: 0..<4, using: &random) != 0 {
                events.append(message("m\(i)", in: id, from: "bob", at: Int64.random(in: 1...500, using: &random)))
            }
            for user in ["me", "ann"] where i % 5 == 0 || user == "me" {
                if Int.random(in: 0..<5, using: &random) == 0 { events.append(.moveChat(id: id, to: .archive, user: user)) }
            }
        }
        for start in stride(from: 0, to: events.count, by: 2_000) {
            for result in try store.apply(Array(events[start..<min(start + 2_000, events.count)])) { _ = try result.get() }
        }
        for (user, list, ids) in [("me", ChatList.main, ["c3", "c7", "c1"]), ("me", .archive, ["c9"]), ("ann", .main, ["c5", "c0"])] {
            for id in ids where try store.chat(id: id, user: user)?.list == list {
                try store.apply(.pinChat(id: id, user: user))
            }
        }
        #expect(try store.membershipAccess(count: store.listSize(of: .main, user: "me") + store.listSize(of: .archive, user: "me")) == .scan)
        #expect(try store.membershipAccess(count: store.listSize(of: .main, user: "me")) == .scan)
        #expect(try store.membershipAccess(count: store.listSize(of: .archive, user: "me")) == .index)
        #expect(try store.membershipAccess(count: store.listSize(of: .main, user: "ann")) == .index)

        for user in ["me", "ann"] {
            let ordered = try files.orderedIDs(of: user)
            let loaded = try store.allChats(of: user).chats
            #expect(loaded.map(\.id) == ordered.map(\.id), "\(user)")
            #expect(try store.allChats(of: user, withContent: false).chats.map(\.id) == ordered.map(\.id))
            #expect(loaded.allSatisfy { $0.title == $0.id })
            for list in ChatList.allCases {
                let inList = ordered.filter { $0.list == list }.map(\.id)
                #expect(inList.count > 100, "\(user) \(list)")
                for offset in [0, 3, inList.count - 40] {
                    let page = try store.chats(in: ChatListView(list: list), user: user, offset: offset, limit: 50)
                    #expect(page.map(\.id) == Array(inList.dropFirst(offset).prefix(50)), "\(user) \(list) page at \(offset)")
                }
                let unread = try store.chats(in: ChatListView(list: list, unreadOnly: true), user: user, offset: 0, limit: 20)
                #expect(unread.map(\.id) == Array(loaded.filter { $0.list == list && $0.unread > 0 }.prefix(20)).map(\.id))
                #expect(try store.counters(of: list, user: user) == ListCounters.recount(loaded, list: list))
                let probe = [inList[0], inList[1], inList[inList.count / 2], inList[inList.count - 1]]
                let positions = try store.positions(of: probe, in: list, user: user)
                for id in probe { #expect(positions[id] == .some(inList.firstIndex(of: id)), "\(user) \(list) \(id)") }
            }
        }
    }

    /// A post moves its chat in every member's list without writing an index page: the post to a
    /// chat of 10 members (of 10 users with 200 chats each) commits 8 pages (the median of 20
    /// posts), where an index keyed by the order date (schema version 10's
    /// `membership_list_order`) made it 22.
    @Test func aPostToAChatOfTenMembersWritesNoIndexPage() throws {
        let files = try TestStore()
        let store = files.store
        let users = (0..<10).map { "u\($0)" }
        var events: [ChatEvent] = users.map { .createUser(id: $0, name: $0, createdAt: 0) }
        for i in 0..<200 { events.append(.createChat(id: "c\(i)", title: "C", createdAt: Int64(i), members: users)) }
        for result in try store.apply(events) { _ = try result.get() }
        let wal = files.path + "-wal"
        let pageSize = try #require(try Database(path: files.path).makeStatement("PRAGMA page_size").fetchValue(Int.self))
        var random = SeededGenerator(seed: 5)
        var framesPerPost: [Int] = []
        for post in 0..<20 {
            try Database(path: files.path).execute("PRAGMA wal_checkpoint(TRUNCATE)")
            #expect(try fileSize(wal) == 0)
            let chat = "c\(Int.random(in: 0..<200, using: &random))"
            try store.apply(message("p\(post)", in: chat, from: users[post % 10], at: Int64(1_000 + post)))
            framesPerPost.append(Int(try fileSize(wal)) / (pageSize + 24))
        }
        // 8 a post, 10–12 when a page splits; 18–28 with the schema version 10 index (median 22).
        #expect(framesPerPost.sorted()[framesPerPost.count / 2] <= 9, "pages a post: \(framesPerPost)")
        #expect(framesPerPost.allSatisfy { $0 <= 14 }, "pages a post: \(framesPerPost)")
    }

    /// A post writes one page of its chat's, its memberships' leaf: not its chat row (schema
    /// version 12: the memberships hold the order date) nor a leaf of a per-chat message index
    /// (version 13: the history is a chain whose ends the memberships hold); the rest it writes
    /// is appended (the message, its id, the change-log row) or one row of the whole store. The
    /// pages of each post's WAL frames, by the table or index they belong to (`dbstat`).
    @Test func aPostWritesOnePageOfItsChatsTheMembershipsLeaf() throws {
        let files = try TestStore()
        let store = files.store
        var events: [ChatEvent] = []
        for i in 0..<2_000 {
            events.append(.createChat(id: "c\(i)", title: "Chat \(i)", createdAt: Int64(i), members: ["me"]))
            events.append(message("m\(i)", in: "c\(i)", at: Int64(i)))
        }
        for result in try store.apply(events) { _ = try result.get() }
        let wal = files.path + "-wal"
        let reader = try Database(path: files.path)
        let pageSize = try #require(try reader.makeStatement("PRAGMA page_size").fetchValue(Int.self))
        var random = SeededGenerator(seed: 12)
        var written: Set<String> = []
        for post in 0..<20 {
            try reader.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            try store.apply(message("p\(post)", in: "c\(Int.random(in: 0..<2_000, using: &random))", at: Int64(5_000 + post)))
            let frames = try Data(contentsOf: URL(fileURLWithPath: wal))
            try reader.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            var membershipPages: Set<Int> = []
            var offset = 32
            while offset + 24 + pageSize <= frames.count {
                let page = frames[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
                if let name = try reader.makeStatement("SELECT name FROM dbstat WHERE pageno = ?1").fetchValue(String.self, page) {
                    written.insert(name)
                    if name == "membership" { membershipPages.insert(page) }
                }
                offset += 24 + pageSize
            }
            #expect(membershipPages.count == 1, "post \(post) wrote membership pages \(membershipPages.sorted())")
        }
        #expect(written.contains("membership") && written.contains("message"), "tables written: \(written.sorted())")
        let appendedOrShared: Set = ["membership", "message", "sqlite_autoindex_message_1", "change_log", "sqlite_sequence", "store_count"]
        #expect(written.isSubset(of: appendedOrShared), "tables written: \(written.sorted())")
    }
}

extension TestStore {
    /// A user's chats (id and list) in the order of SQLite's `ORDER BY` over their memberships.
    func orderedIDs(of user: String) throws -> [(id: String, list: ChatList)] {
        try Database(path: path).makeStatement("""
            SELECT chat_id, list FROM membership WHERE user_id = ?1
            ORDER BY list, pin_order DESC, last_message_date DESC, chat_id
            """).fetchAll(user) { row in (id: row[0], list: row[1]) }
    }
}
