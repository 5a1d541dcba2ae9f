// The store's side of the daemon's ingest without the daemon, for instruction counts and
// profiles: seeded posts to random chats of a database of `chats` chats (one member, the default
// user), applied in group commits of `group` posts as a saturated daemon applies them, each group
// followed by the catch-up read of its changes (`changes(after:user:)`) as the engine's is.
// Prints the wall time per post of each tenth of the run.
//
//     swift build -c release --product StoreProbe
//     .build/release/StoreProbe [posts, default 100000] [chats, default 10000] [group, default 300]
//     valgrind --tool=callgrind \
//         --toggle-collect='$s10StoreProbe9postGroup_2to5afterSi7changed_s5Int64V6latesttSay9ChatModel0J5EventOG_0jA00J8DatabaseCAGtKF' \
//         .build/release/StoreProbe 15000 10000 300     # instructions of the groups and their catch-up
//
// The database is made under the temporary directory and removed at the end.
import BenchmarkSupport
import ChatModel
import ChatStore
import StoreFixtures
import Dispatch
import Foundation

let arguments = CommandLine.arguments.dropFirst().map { Int($0) }
precondition(arguments.allSatisfy { $0 != nil && $0! > 0 }, "usage: StoreProbe [posts] [chats] [group]")
let posts = arguments.first.flatMap { $0 } ?? 100_000
let chatCount = arguments.dropFirst().first.flatMap { $0 } ?? 10_000
let group = arguments.dropFirst(2).first.flatMap { $0 } ?? 300

let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chatfeed-store-probe-\(getpid())")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }
let path = directory.appendingPathComponent("probe.sqlite").path
// The daemon's store options where they change what a post does (Config/chatfeed.json), but
// durability `normal`: an fsync is time, not instructions.
var options = StoreOptions(durability: .normal, cacheSizeKiB: 65_536)
options.autoCheckpointPages = 14_336
let store = try ChatDatabase(path: path, options: options)

try seedChats(chatCount, into: store)

var random = SplitMix64(seed: 18)
var sequence = try store.latestChangeSequence()
var perPost: [Double] = []  // µs per post, one entry per group
var posted = 0
var changed = 0
while posted < posts {
    let count = min(group, posts - posted)
    let events = (0..<count).map { k in
        ChatEvent.postMessage(Message(
            id: "probe-\(posted + k)", chat: seededChatID(Int(random.next() % UInt64(chatCount))), sender: "bob",
            text: "hello from the probe", sentAt: seededDate + 1_000_000 + Int64(posted + k)))
    }
    let start = DispatchTime.now().uptimeNanoseconds
    let (read, latest) = try postGroup(events, to: store, after: sequence)
    perPost.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1_000 / Double(count))
    changed += read
    sequence = latest
    posted += count
}
precondition(changed >= posts / 2, "the catch-up reads the posts' chats back")
let tenth = max(perPost.count / 10, 1)
for chunk in stride(from: 0, to: perPost.count, by: tenth) {
    let sorted = perPost[chunk..<min(chunk + tenth, perPost.count)].sorted()
    print("groups \(chunk)…: p0 \(format(sorted[0])) p50 \(format(sorted[sorted.count / 2])) µs per post")
}
let sorted = perPost.sorted()
print("all: p0 \(format(sorted[0])) p50 \(format(sorted[sorted.count / 2])) µs per post (\(posts) posts, \(chatCount) chats, groups of \(group))")

/// One group commit and its catch-up read: what the probe measures (callgrind's toggle).
@inline(never)
func postGroup(_ events: [ChatEvent], to store: ChatDatabase, after sequence: Int64) throws -> (changed: Int, latest: Int64) {
    for result in try store.apply(events) { _ = try result.get() }
    let (changes, latest) = try store.changes(after: sequence, user: User.defaultID)
    return (changes.count, latest)
}

func format(_ microseconds: Double) -> String {
    String(Double(Int(microseconds * 100 + 0.5)) / 100)
}
