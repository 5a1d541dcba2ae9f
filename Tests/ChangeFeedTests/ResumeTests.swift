import ChangeFeed
import ChatModel
import ListDiff
import Testing
import TestSupport

extension KnownRow: DiffableItem {}

extension Chat {
    var knownRow: KnownRow { KnownRow(id: id, revision: revision) }
}

/// Resuming with the rows a client shows (docs/PROTOCOL.md, The live feed): the batches take them to the current list.
@Suite("Resume with what the client has")
struct ResumeTests {
    /// Checks one resume: every batch passes the UIKit model and together they take `known` to
    /// `current`; when `known` is consistent, only chats whose revision differs move and the rows
    /// that stay are the rule's optimum among them; otherwise the blind optimum.
    static func check(_ resume: ResumeDiff, known: [KnownRow], current: [Chat], sourceLocation: SourceLocation = #_sourceLocation) throws {
        let new = current.map(\.knownRow)
        let structural = resume.batches.first { $0.isStructural }
        let updates = resume.batches.first { !$0.isStructural }
        #expect(resume.batches.count <= 2, sourceLocation: sourceLocation)
        if resume.batches.count == 2 { #expect(resume.batches[0].isStructural && !resume.batches[1].isStructural, sourceLocation: sourceLocation) }
        let result = ListDiffResult(
            structural: structural?.mapItems(\.knownRow), updates: updates?.mapItems(\.knownRow))
        try #require(ReferenceDiff.problem(with: result, old: known, new: new) == nil, sourceLocation: sourceLocation)
        // Full chats: the rows after the batches are the current chats, content included.
        var shown = known.map { Chat(id: $0.id, title: "?", createdAt: 0, lastMessage: nil, lastMessageDate: 0, unread: 0, revision: $0.revision) }
        let currentByID = Dictionary(uniqueKeysWithValues: current.map { ($0.id, $0) })
        shown = shown.map { row in currentByID[row.id].flatMap { $0.revision == row.revision ? $0 : nil } ?? row }
        for batch in resume.batches { shown = try UIKitBatchModel.apply(batch, to: shown) }
        #expect(shown == current, sourceLocation: sourceLocation)

        let knownRevision = Dictionary(uniqueKeysWithValues: known.map { ($0.id, $0.revision) })
        let changed = Set(current.filter { chat in knownRevision[chat.id].map { $0 != chat.revision } ?? false }.map(\.id))
        let moved = Set((structural?.moves ?? []).map { known[$0.from].id })
        let stayWeight = ReferenceDiff.stayWeight(of: result, old: known, new: new)
        if let optimum = ReferenceDiff.optimalWeight(old: known, new: new, mayMove: changed) {
            #expect(resume.knownWasConsistent, sourceLocation: sourceLocation)
            #expect(moved.isSubset(of: changed), "moved \(moved.subtracting(changed)) whose revision did not change", sourceLocation: sourceLocation)
            #expect(stayWeight == optimum, sourceLocation: sourceLocation)
        } else {
            #expect(!resume.knownWasConsistent, sourceLocation: sourceLocation)
            #expect(stayWeight == ReferenceDiff.optimalWeight(old: known, new: new), sourceLocation: sourceLocation)
        }
    }

    /// What happened, while the client was away, to the chats it showed or now shows: the kinds
    /// of change a resume must carry, counted so that a test shows its stream exercised them.
    struct AwayChanges {
        var pinned = 0, unpinned = 0, pinsReordered = 0, listMoves = 0, muteToggles = 0, reads = 0, removed = 0

        mutating func count(before: [String: Chat], now: [String: Chat], ids: some Sequence<String>) {
            for id in Set(ids) {
                guard let old = before[id] else { continue }
                guard let new = now[id] else { removed += 1; continue }
                if !old.pinned && new.pinned { pinned += 1 }
                if old.pinned && !new.pinned && old.list == new.list { unpinned += 1 }
                if old.pinned && new.pinned && old.pinOrder != new.pinOrder { pinsReordered += 1 }
                if old.list != new.list { listMoves += 1 }
                if old.muted != new.muted { muteToggles += 1 }
                if old.unread > 0 && new.unread == 0 { reads += 1 }
            }
        }
    }

    /// A client takes a snapshot, the stream goes on (messages, reads, pins, unpins, pin
    /// reorders, archiving and unarchiving, mute and unmute, removals), the client resumes with its
    /// old rows — in each list, whole or windowed, and unread-only.
    @Test("an honest client: only changed chats move, at the optimum", arguments: [
        (101 as UInt64, ChatListView.main, nil as Int?), (102, .main, nil), (103, .main, 5), (104, .main, 12),
        (105, .main, 30), (106, .main, 1),
        (107, ChatListView(list: .archive), nil), (108, ChatListView(list: .archive), 4),
        (109, ChatListView(unreadOnly: true), nil), (110, ChatListView(unreadOnly: true), 6),
        (111, ChatListView(list: .archive, unreadOnly: true), nil), (112, ChatListView(list: .archive, unreadOnly: true), 2),
    ])
    func honestClient(seed: UInt64, view: ChatListView, limit: Int?) throws {
        var generator = SeededGenerator(seed: seed)
        var stream = ChatStream()
        for _ in 0..<40 { _ = stream.nextChange(using: &generator) }
        let feed = LiveFeed(chats: stream.chats.values.sorted { $0.orderKey < $1.orderKey }, options: FeedOptions(resetThreshold: .infinity))
        var away = AwayChanges()
        var nonEmpty = 0
        for round in 0..<60 {
            let shown = try feed.subscribe(view: view, limit: limit, maxInFlight: 0).items
            #expect(shown == Array(stream.list(view).prefix(limit ?? .max)))
            let before = stream.chats
            // Anything from nothing to a long absence.
            for _ in 0..<Int.random(in: 0...(round % 3 == 0 ? 80 : 6), using: &generator) {
                _ = feed.apply(stream.nextGroup(maxChanges: 4, using: &generator))
            }
            let known = shown.map(\.knownRow)
            let current = Array(stream.list(view).prefix(limit ?? .max))
            away.count(before: before, now: stream.chats, ids: (shown + current).map(\.id))
            let resumed = try feed.subscribe(view: view, limit: limit, maxInFlight: 0, known: known)
            #expect(resumed.items == current)
            let batches = try #require(resumed.batches)
            #expect(batches == (try ResumeDiff(known: known, current: current)).batches)
            try Self.check(ResumeDiff(known: known, current: current), known: known, current: current)
            if shown == current { #expect(batches.isEmpty) }
            if !current.isEmpty { nonEmpty += 1 }
            for subscription in feed.subscriptionStats { try feed.unsubscribe(subscription.subscription) }
        }
        #expect(nonEmpty >= 30, "the view has rows to resume")
        // Every kind of list change reached some resume (a view loses its chats to the other list,
        // or gains them from it).
        #expect(away.pinned > 0 && away.unpinned > 0 && away.listMoves > 0 && away.muteToggles > 0, "\(away)")
        if limit == nil || limit! > 2 { #expect(away.pinsReordered > 0, "\(away)") }
        if !view.unreadOnly { #expect(away.reads > 0 && away.removed > 0, "\(away)") }
    }

    /// Rows persisted at different moments, rows of removed chats, stale and future revisions,
    /// ids the store never had, shuffled rows: never an invalid batch, always the current list.
    @Test("a lying or corrupted client still gets valid batches to the current list", arguments: [
        (201 as UInt64, ChatListView.main, nil as Int?), (202, .main, nil), (203, .main, 8), (204, .main, 20), (205, .main, 3),
        (206, ChatListView(list: .archive), nil), (207, ChatListView(unreadOnly: true), 5),
        (208, ChatListView(list: .archive, unreadOnly: true), nil),
    ])
    func mixedClient(seed: UInt64, view: ChatListView, limit: Int?) throws {
        var generator = SeededGenerator(seed: seed)
        var stream = ChatStream()
        for _ in 0..<40 { _ = stream.nextChange(using: &generator) }
        var moments: [[Chat]] = [stream.list(view)]
        var consistent = 0
        var inconsistent = 0
        for _ in 0..<150 {
            for _ in 0..<Int.random(in: 1...8, using: &generator) { _ = stream.nextGroup(maxChanges: 3, using: &generator) }
            moments.append(stream.list(view))
            let current = Array(stream.list(view).prefix(limit ?? .max))

            // The order of one moment, rows of others, and noise.
            let base = Array(moments[Int.random(in: max(0, moments.count - 6)..<moments.count, using: &generator)].prefix((limit ?? 1_000) + 3))
            var known: [KnownRow] = []
            var seen = Set<String>()
            for chat in base where seen.insert(chat.id).inserted {
                var row = chat.knownRow
                switch Int.random(in: 0..<10, using: &generator) {
                case 0:  // this row as another moment had it (if the chat existed then)
                    if let other = moments.randomElement(using: &generator)!.first(where: { $0.id == chat.id }) { row = other.knownRow }
                case 1, 2:  // the current revision at the old place: contradicts the list when the chat moved
                    if let now = stream.chats[chat.id] { row = now.knownRow }
                case 3: row.revision -= 1  // stale
                case 4: row.revision += 1_000  // from the future
                case 5: continue  // the client lost this row
                default: break
                }
                known.append(row)
            }
            if Bool.random(using: &generator) {
                known.insert(KnownRow(id: "ghost\(known.count)", revision: 7), at: Int.random(in: 0...known.count, using: &generator))
            }
            if Int.random(in: 0..<4, using: &generator) == 0, known.count > 1 {
                known.swapAt(Int.random(in: known.indices, using: &generator), Int.random(in: known.indices, using: &generator))
            }
            let resume = try ResumeDiff(known: known, current: current)
            if resume.knownWasConsistent { consistent += 1 } else { inconsistent += 1 }
            try Self.check(resume, known: known, current: current)
        }
        // The streams exercise both paths.
        #expect(consistent > 10 && inconsistent >= 3, "consistent \(consistent), inconsistent \(inconsistent)")
    }

    /// Exhaustive small cases: every order of a few known rows against one current list.
    @Test("every order of four known rows, some changed")
    func everyOrder() throws {
        let current = ["a", "b", "c", "d"].enumerated().map { index, id in
            Chat(id: id, title: id, createdAt: 0, lastMessage: nil, lastMessageDate: Int64(100 - index), unread: 0, revision: 5)
        }
        func permutations(_ items: [String]) -> [[String]] {
            items.count <= 1 ? [items] : items.indices.flatMap { i in
                permutations(Array(items[..<i] + items[(i + 1)...])).map { [items[i]] + $0 }
            }
        }
        for order in permutations(["a", "b", "c", "e"]) {
            for changedMask in 0..<16 {
                let known = order.enumerated().map { position, id in
                    KnownRow(id: id, revision: changedMask & (1 << position) != 0 ? 4 : 5)
                }
                try Self.check(ResumeDiff(known: known, current: current), known: known, current: current)
            }
        }
    }

    @Test("duplicate ids are invalid params naming the id; nothing is subscribed")
    func duplicates() throws {
        let feed = LiveFeed(chats: [])
        let known = [KnownRow(id: "a", revision: 1), KnownRow(id: "b", revision: 1), KnownRow(id: "a", revision: 2)]
        #expect(throws: ChatError.invalidParams(
            field: "known", reason: "holds the id \"a\" twice (rows 0 and 2); ids must be distinct")) {
            _ = try feed.subscribe(limit: nil, maxInFlight: nil, known: known)
        }
        #expect(feed.subscriptionStats.isEmpty)
    }

    @Test("an empty known inserts every row, whatever the reset threshold")
    func emptyKnown() throws {
        let chats = (0..<30).map {
            Chat(id: "c\($0)", title: "C\($0)", createdAt: 0, lastMessage: nil, lastMessageDate: Int64(1_000 - $0), unread: 0, revision: 1)
        }
        let feed = LiveFeed(chats: chats, options: FeedOptions(resetThreshold: 0.1))
        let snapshot = try feed.subscribe(limit: 10, maxInFlight: nil, known: [])
        let batches = try #require(snapshot.batches)
        #expect(batches.count == 1)
        #expect(batches[0].inserts.map(\.item) == Array(chats.prefix(10)))
        #expect(batches[0].inserts.map(\.index) == Array(0..<10))
        #expect(try feed.subscribe(limit: nil, maxInFlight: nil, known: []).batches?.first?.inserts.count == 30)
        let empty = LiveFeed(chats: [])
        #expect(try empty.subscribe(limit: nil, maxInFlight: nil, known: []).batches == [])
    }

    @Test("when the batches would be larger than the snapshot, the result carries items")
    func resetRule() throws {
        var generator = SeededGenerator(seed: 302)
        var stream = ChatStream()
        for _ in 0..<30 { _ = stream.nextChange(using: &generator) }
        let feed = LiveFeed(chats: stream.list, options: FeedOptions(resetThreshold: 0.5))
        let shown = try feed.subscribe(limit: 10, maxInFlight: 0).items
        // A small change: batches.
        let one = stream.nextChange(using: &generator)
        _ = feed.apply([one])
        let small = try feed.subscribe(limit: 10, maxInFlight: 0, known: shown.map(\.knownRow))
        #expect(small.batches != nil)
        // A client that knows none of the rows: larger than the snapshot, so items.
        let strangers = (0..<10).map { KnownRow(id: "x\($0)", revision: 1) }
        let large = try feed.subscribe(limit: 10, maxInFlight: 0, known: strangers)
        #expect(large.batches == nil)
        #expect(large.items == Array(stream.list.prefix(10)))
    }

    /// Notifications after a resume continue from seq 1 and apply on top of the caught-up rows.
    @Test("later notifications continue from seq 0")
    func notificationsAfterResume() throws {
        var generator = SeededGenerator(seed: 303)
        var stream = ChatStream()
        for _ in 0..<30 { _ = stream.nextChange(using: &generator) }
        let feed = LiveFeed(chats: stream.list, options: FeedOptions(resetThreshold: .infinity))
        let shown = try feed.subscribe(limit: 8, maxInFlight: 0).items
        for _ in 0..<20 { _ = feed.apply(stream.nextGroup(maxChanges: 3, using: &generator)) }
        let resumed = try feed.subscribe(limit: 8, maxInFlight: 1, known: shown.map(\.knownRow))
        var rows = shown
        for batch in try #require(resumed.batches) { rows = try UIKitBatchModel.apply(batch, to: rows) }
        var mirror = Mirror(subscription: resumed.subscription, rows: rows)
        for _ in 0..<100 {
            for notification in feed.apply(stream.nextGroup(maxChanges: 3, using: &generator))
            where notification.subscription == mirror.subscription {
                try mirror.receive(notification)
            }
            if mirror.lastSeq > 0 {
                for notification in try feed.acknowledge(mirror.subscription, seq: mirror.lastSeq) { try mirror.receive(notification) }
            }
        }
        while true {
            let more = try feed.acknowledge(mirror.subscription, seq: mirror.lastSeq)
            if more.isEmpty { break }
            for notification in more { try mirror.receive(notification) }
        }
        #expect(mirror.lastSeq > 0)
        #expect(mirror.rows == Array(stream.list.prefix(8)))
    }
}
