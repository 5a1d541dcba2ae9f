import Foundation
import NamedThreads
import Testing

/// `Thread.start(named:)`: the operating system knows the thread by its name (cut to 15 bytes).
@Suite struct NamedThreadTests {
    @Test func aNameIsCutToFifteenBytesAtACharacterBoundary() {
        #expect(Thread.osThreadName("chatfeed.engine") == "chatfeed.engine")
        #expect(Thread.osThreadName("chatstore.checkpointer") == "chatstore.check")
        #expect(Thread.osThreadName("") == "")
        // "é" is two bytes: fourteen ASCII bytes leave no room for it.
        #expect(Thread.osThreadName("abcdefghijklmnéz") == "abcdefghijklmn")
        #expect(Thread.osThreadName("abcdefghijklmé") == "abcdefghijklmé")
        for name in ["chatfeed.engine", "ünïcødé-thread-name", "🧵🧵🧵🧵🧵"] {
            #expect(Thread.osThreadName(name).utf8.count <= Thread.maximumNameBytes)
            #expect(name.hasPrefix(Thread.osThreadName(name)))
        }
    }

    #if os(Linux)
    @Test func theOperatingSystemKnowsAStartedThreadByItsName() throws {
        let seen = LockedNames()
        let done = DispatchSemaphore(value: 0)
        for name in ["cf.test.short", "chatfeed.test.long-name"] {
            Thread.start(named: name) {
                seen.append((try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "")
                done.signal()
            }
            #expect(done.wait(timeout: .now() + 10) == .success)
        }
        #expect(seen.names == ["cf.test.short\n", "chatfeed.test.l\n"])
    }
    #endif
}

private final class LockedNames: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [String] = []
    func append(_ name: String) { lock.withLock { stored.append(name) } }
    var names: [String] { lock.withLock { stored } }
}
