import ChatfeedClient
import ChatModel
import Foundation
import ListDiff
import Testing
import TestSupport
@testable import chatfeed

/// The watch's pure parts: frames from updates, the columns by display width, the redraw, and
/// the database check.
@Suite struct WatchScreenTests {
    static let now: Int64 = 1_763_884_800_000

    static func chat(_ id: String, title: String, unread: Int64 = 0, pinOrder: Int64 = 0, muted: Bool = false) -> Chat {
        Chat(
            id: id, title: title, createdAt: now - 60_000, lastMessage: nil, lastMessageDate: now - 60_000, unread: unread,
            revision: 1, pinOrder: pinOrder, muted: muted)
    }

    static let titles = [
        "Ann", "日本語のチャット", "🎉 party", "Zoe\u{308}", "👨‍👩‍👧 family", "한국어 채팅방", "ｆｕｌｌｗｉｄｔｈ", "a very long title that goes on and on",
    ]

    static func model(_ chats: [Chat]) -> WatchModel {
        var model = WatchModel(title: "test — main")
        model.apply(FeedUpdate(kind: .snapshot, seq: 0, steps: [], chats: chats, total: chats.count), now: now)
        return model
    }

    /// The rows of a frame: the lines after the column header.
    static func rows(_ frame: [FrameLine]) -> ArraySlice<FrameLine> {
        frame[(frame.firstIndex { $0.style == .header }! + 1)...]
    }

    @Test(arguments: [24, 40, 80, 132])
    func everyLineFitsAndTheColumnsLineUpWhateverTheTitles(columns: Int) {
        let chats = Self.titles.enumerated().map { Self.chat("c\($0)", title: $1, unread: Int64($0), pinOrder: $0 < 2 ? 2 - Int64($0) : 0, muted: $0 == 3) }
        let frame = Self.model(chats).frame(size: TerminalSize(columns: columns, rows: 40), now: Self.now)
        #expect(Self.rows(frame).count == chats.count)
        #expect(frame.count == chats.count + (columns >= 132 ? 3 : 4), "the legend takes two lines on a narrow terminal")
        for line in frame { #expect(TerminalText.width(line.text) <= columns, "'\(line.text)'") }
        // No preview ("—") and equal cells: every row is as wide as the others.
        let rowWidths = Set(Self.rows(frame).map { TerminalText.width($0.text) })
        #expect(rowWidths.count == 1, "\(Self.rows(frame).map(\.text))")
        if columns >= 80 {
            let layout = WatchLayout(columns: columns)
            #expect(rowWidths.first == WatchLayout.fixedWidth + layout.titleWidth + 1)
            #expect(Self.rows(frame).allSatisfy { $0.text.contains("—") }, "the preview column is shown")
        }
    }

    /// The demo's web pages stay on screen under the title while the watch runs (printed only
    /// before it took the screen, they were hidden until it ended).
    @Test func notesShowUnderTheTitle() {
        var model = Self.model([Self.chat("a", title: "Ann")])
        model.notes = ["web client, one window per user:", "  http://127.0.0.1:8080/?user=me", "  http://127.0.0.1:8080/?user=ann"]
        let frame = model.frame(size: TerminalSize(columns: 80, rows: 24), now: Self.now)
        #expect(frame[1...3].map(\.text) == model.notes)
        #expect(frame[4].style == .legend && frame[4].text.contains("Unread"))
        #expect(Self.rows(frame).map { $0.text.contains("Ann") } == [true])
        let narrow = model.frame(size: TerminalSize(columns: 20, rows: 24), now: Self.now)
        for line in narrow { #expect(TerminalText.width(line.text) <= 20, "'\(line.text)'") }
        // On a short terminal the rows come first.
        let short = model.frame(size: TerminalSize(columns: 80, rows: 8), now: Self.now)
        #expect(!short.contains { $0.text.contains("user=me") })
        #expect(Self.rows(short).map { $0.text.contains("Ann") } == [true])
    }

    @Test func aHeaderAndALegendExplainTheColumnsAndTheUnreadCount() {
        var chats = [Self.chat("a", title: "Ann", unread: 3), Self.chat("b", title: "Bob", unread: 2, muted: true)]
        chats[0].pinOrder = 1
        var model = WatchModel(title: "x")
        model.apply(
            FeedUpdate(
                kind: .snapshot, seq: 0, steps: [], chats: chats, total: 2,
                unread: UnreadCounters(chats: 2, messages: 5, unmutedChats: 1, unmutedMessages: 3)),
            now: Self.now)
        let frame = model.frame(size: TerminalSize(columns: 160, rows: 24), now: Self.now)
        #expect(frame[0].text == "chatfeed watch — main: 2 chats, 🔴 3 unread in 1 chats — seq 0, 0 batches, 0 resets — x")
        #expect(frame[1].style == .legend && frame[1].text.contains("Unread: messages not read yet") && frame[1].text.contains("🔕 muted"))
        #expect(WatchModel.legend(width: 200).count == 1 && WatchModel.legend(width: 60).count == 2)
        #expect(frame[2].style == .header && frame[2].text.contains("Chat") && frame[2].text.contains("Unread"))
        #expect(TerminalText.width(frame[2].text) == 160, "the header bar spans the terminal")
        #expect(frame[3].text.contains("📌") && frame[3].text.contains("Ann") && frame[3].text.contains("     3 "))
        #expect(frame[4].text.contains("🔕") && frame[4].text.contains("     2 "))
    }

    @Test func theFrameFollowsTheTerminalsHeight() {
        let chats = (0..<30).map { Self.chat("c\($0)", title: "chat \($0)") }
        let model = Self.model(chats)
        let short = model.frame(size: TerminalSize(columns: 80, rows: 10), now: Self.now)
        #expect(short.count == 10)
        #expect(short.last?.text.hasPrefix("… 25 more rows") == true, "\(short.last?.text ?? "")")
        let tall = model.frame(size: TerminalSize(columns: 80, rows: 40), now: Self.now)
        #expect(tall.count == 34 && tall.last?.text.contains("chat 29") == true)
        let wide = model.frame(size: TerminalSize(columns: 200, rows: 40), now: Self.now)
        #expect(TerminalText.width(wide[2].text) == 200 && TerminalText.width(tall[3].text) == 80, "the header bar")
    }

    @Test func batchesMarkTheRowsTheyMovedInsertedOrChangedAndTheMarksFade() {
        let a = Self.chat("a", title: "Ann"), b = Self.chat("b", title: "Bob")
        var model = Self.model([a, b])
        var bumped = b
        bumped.revision = 2
        let steps = [
            FeedStep(batch: Batch(moves: [Move(from: 1, to: 0)]), chats: [b, a]),
            FeedStep(batch: Batch(updates: [IndexedItem(index: 0, item: bumped)]), chats: [bumped, a]),
        ]
        model.apply(FeedUpdate(kind: .batches, seq: 1, steps: steps, chats: [bumped, a], total: 2), now: Self.now)
        let c = Self.chat("c", title: "Cy")
        model.apply(
            FeedUpdate(
                kind: .batches, seq: 2, steps: [FeedStep(batch: Batch(inserts: [IndexedItem(index: 2, item: c)]), chats: [bumped, a, c])],
                chats: [bumped, a, c], total: 3),
            now: Self.now + 500)
        let frame = model.frame(size: TerminalSize(columns: 80, rows: 24), now: Self.now + 500)
        #expect(frame[0].text.contains("seq 2, 3 batches, 0 resets"))
        let rows = Array(Self.rows(frame))
        #expect(rows[0].text.hasPrefix("↑") && rows[0].style == .marked, "a move keeps its mark over its deferred update")
        #expect(rows[1].text.hasPrefix(" ") && rows[2].text.hasPrefix("+"))
        let early = model.fadeMarks(now: Self.now + 1_000)
        let late = model.fadeMarks(now: Self.now + 2_100)
        #expect(!early && late)
        let faded = Array(Self.rows(model.frame(size: TerminalSize(columns: 80, rows: 24), now: Self.now + 2_100)))
        #expect(faded[0].text.hasPrefix(" ") && faded[2].text.hasPrefix("+"))
    }

    @Test func aRedrawRewritesOnlyTheLinesThatChangedAndNeverClearsTheScreen() {
        func frame(_ texts: [String]) -> [FrameLine] { texts.map { FrameLine($0, style: .plain, width: 80) } }
        let first = ScreenUpdate.redraw(from: nil, to: frame(["t", "a", "b", "c"]))
        #expect(first.hasPrefix("\u{1B}[H\u{1B}[2J") && first.contains("c\u{1B}[K"))
        let second = ScreenUpdate.redraw(from: frame(["t", "a", "b", "c"]), to: frame(["t", "a", "B", "c"]))
        #expect(second == "\u{1B}[3;1HB\u{1B}[K")
        let shorter = ScreenUpdate.redraw(from: frame(["t", "a", "b", "c"]), to: frame(["t", "x"]))
        #expect(shorter == "\u{1B}[2;1Hx\u{1B}[K\u{1B}[3;1H\u{1B}[J")
        #expect(ScreenUpdate.redraw(from: frame(["t"]), to: frame(["t"])).isEmpty)
        let styled = ScreenUpdate.redraw(from: nil, to: [FrameLine("head", style: .header, width: 6, fill: true)])
        #expect(styled.contains("\u{1B}[7mhead  \u{1B}[0m"))
    }

    @Test func aTitleCannotMoveTheCursor() {
        let frame = Self.model([Self.chat("a", title: "evil\u{1B}[2J\u{1B}]0;x\u{07}")]).frame(size: TerminalSize(columns: 80, rows: 24), now: Self.now)
        #expect(!frame.contains { $0.text.contains("\u{1B}") } && Self.rows(frame).first?.text.contains("evil␛[2J") == true)
    }

    @Test func aDatabaseInADirectoryThatDoesNotExistIsNamedAndNothingIsCreated() throws {
        let directory = try TemporaryDirectory()
        let missing = directory.path("nowhere/deeper")
        do {
            try WatchDatabase.check(missing + "/feed.sqlite")
            Issue.record("a database in a missing directory was accepted")
        } catch let failure as CLIFailure {
            #expect(failure.message.contains("no directory '\(missing)'"))
        }
        #expect(!FileManager.default.fileExists(atPath: directory.path("nowhere")))
        do {
            try WatchDatabase.check(directory.path("absent.sqlite"))
            Issue.record("a missing database was accepted")
        } catch let failure as CLIFailure {
            #expect(failure.message.contains("no database at") && failure.message.contains("chatfeed init"))
        }
        #expect(!FileManager.default.fileExists(atPath: directory.path("absent.sqlite")))
    }
}
