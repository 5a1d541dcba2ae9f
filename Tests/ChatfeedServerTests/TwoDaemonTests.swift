import ChatModel
import Foundation
import JSONCodec
import TestSupport
import Testing
import WireProtocol

/// Two daemons on one database file, each written to through its own stdin: each one's
/// subscribers see the other's writes too (the change log and `PRAGMA data_version`), and both
/// end with the same list. A third daemon started afterwards loads exactly that list.
@Suite struct TwoDaemonTests {
    @Test(arguments: [UInt64(5), 6])
    func twoDaemonsOnOneFileAgree(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        let directory = try TemporaryDirectory()
        let daemons = [try Daemon(directory: directory), try Daemon(directory: directory)]
        var models = [ClientModel(prefix: "A"), ClientModel(prefix: "B")]
        for (daemon, index) in zip(daemons, models.indices) {
            for _ in 0..<4 {
                let write = models[index].createChat(using: &random)
                try ClientModel.check(try daemon.request(write.method, write.params), against: write.expect, method: write.method, params: write.params)
            }
        }
        // Wait until each daemon has seen the other's chats, then subscribe.
        for daemon in daemons {
            let deadline = Date(timeIntervalSinceNow: 20)
            while try daemon.call("chats.list")["total"] != 8 {
                guard Date() < deadline else { throw HarnessError("a daemon did not pick up the other's chats") }
                usleep(5_000)
            }
        }
        let mirrors = try daemons.map { daemon in
            [try FeedMirror(daemon: daemon, maxInFlight: 1), try FeedMirror(daemon: daemon, limit: 4, maxInFlight: 0)]
        }

        var written = 0
        while written < 600 {
            let which = Int.random(in: 0..<2, using: &random)
            let daemon = daemons[which]
            written += try daemon.writeRandomGroup(of: &models[which], most: 20, using: &random)
            for (daemon, pair) in zip(daemons, mirrors) {
                for mirror in pair {
                    try mirror.catchUp(daemon)
                    if mirror.maxInFlight > 0, mirror.lastSeq > mirror.lastAcked, Bool.random(using: &random) {
                        mirror.ack(daemon, upTo: mirror.lastSeq, asRequest: false)
                    }
                }
            }
        }

        // Both daemons reach the same list: wait until both report the latest change, then settle.
        let expected = (models[0].expectedList + models[1].expectedList).sorted(by: FeedMirror.precedes)
        var lists: [[Chat]] = []
        for (daemon, pair) in zip(daemons, mirrors) {
            let deadline = Date(timeIntervalSinceNow: 20)
            var items: [Chat] = []
            while true {
                _ = try FeedMirror.settle(pair, daemon: daemon)
                items = try (daemon.call("chats.list", ["limit": 10_000])["items"]?.arrayValue ?? []).map { try Chat(jsonValue: $0) }
                var withoutRevision = items
                for index in withoutRevision.indices { withoutRevision[index].revision = 0 }
                if withoutRevision == expected { break }
                guard Date() < deadline else {
                    Issue.record("seed \(seed): a daemon's list never reached the expected one: \(items.map(\.id)) vs \(expected.map(\.id))")
                    break
                }
                usleep(10_000)
            }
            #expect(pair[0].rows == items, "seed \(seed): the full mirror differs from chats.list")
            #expect(pair[1].rows == Array(items.prefix(4)), "seed \(seed): the window mirror differs from chats.list")
            lists.append(items)
        }
        if ProcessInfo.processInfo.environment["E2E_VERBOSE"] != nil { print("seed \(seed): \(lists[0].count) chats; mirrors \(mirrors.flatMap { $0 }.map { "\($0.batches)/\($0.resets)" })") }
        #expect(lists[0] == lists[1], "seed \(seed): the daemons disagree (revisions included)")
        for daemon in daemons { #expect(try daemon.shutDown() == .exited(0)) }

        // A new daemon loads the same list, revisions included, and goes on from there.
        let third = try Daemon(directory: directory)
        let reloaded = try (third.call("chats.list", ["limit": 10_000])["items"]?.arrayValue ?? []).map { try Chat(jsonValue: $0) }
        #expect(reloaded == lists[0])
        let mirror = try FeedMirror(daemon: third, maxInFlight: 0)
        if let bottom = reloaded.last {
            try third.call("message.post", ["chat": .string(bottom.id), "id": "after-restart", "sender": "z", "text": "up", "sentAt": .integer(Int64.max)])
            _ = try third.call("server.stats")
            try mirror.catchUp(third)
            #expect(mirror.rows.first?.id == bottom.id && mirror.rows.first!.revision > bottom.revision)
        }
        #expect(try third.shutDown() == .exited(0))
    }

    /// Several processes opening a new database file at the same moment all start: none fails
    /// with "database is locked" while another one creates the file, switches it to WAL or
    /// migrates it.
    @Test func daemonsStartingTogetherOnANewFileAllStart() throws {
        for round in 0..<12 {
            let directory = try TemporaryDirectory()
            let daemons = try (0..<4).map { _ in try Daemon(directory: directory) }
            for (index, daemon) in daemons.enumerated() {
                let reply = Result { try daemon.request("server.stats") }
                #expect((try? reply.get())?.result != nil, "round \(round), daemon \(index): \(reply); stderr: \(daemon.stderr)")
            }
            for daemon in daemons where daemon.isRunning { _ = try daemon.shutDown() }
        }
    }
}
