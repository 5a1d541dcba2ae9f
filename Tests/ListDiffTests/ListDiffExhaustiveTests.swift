import ListDiff
import Testing
import TestSupport

@Suite("Every pair of small lists")
struct ListDiffExhaustiveTests {
    /// All arrangements of up to 5 of the ids 0…4, against each other, with revision changes on
    /// a pattern that varies with the pair.
    @Test("blind diffs are valid and keep the optimal rows in place")
    func allPairsOfFive() throws {
        let arrangements = RandomLists.arrangements(of: [0, 1, 2, 3, 4])
        var checked = 0
        for (oldNumber, oldIDs) in arrangements.enumerated() {
            let old = [TestItem](ids: oldIDs)
            for (newNumber, newIDs) in arrangements.enumerated() {
                let new = newIDs.map { TestItem(id: $0, revision: ($0 + oldNumber + newNumber) % 3 == 0 ? 1 : 0) }
                let result = try ListDiffer.diff(from: old, to: new)
                try #require(ReferenceDiff.problem(with: result, old: old, new: new) == nil, "\(old) → \(new)")
                try #require(
                    ReferenceDiff.stayWeight(of: result, old: old, new: new)
                        == ReferenceDiff.optimalWeight(old: old, new: new), "\(old) → \(new)")
                checked += 1
            }
        }
        #expect(checked == 326 * 326)
    }

    @Test("every permutation of six rows")
    func permutationsOfSix() throws {
        let old = [TestItem](ids: [0, 1, 2, 3, 4, 5])
        for ids in RandomLists.arrangements(of: [0, 1, 2, 3, 4, 5]) where ids.count == 6 {
            let new = [TestItem](ids: ids)
            let result = try ListDiffer.diff(from: old, to: new)
            try #require(ReferenceDiff.problem(with: result, old: old, new: new) == nil, "\(new)")
            try #require(
                ReferenceDiff.stayWeight(of: result, old: old, new: new)
                    == ReferenceDiff.optimalWeight(old: old, new: new), "\(new)")
        }
    }

    /// Lists ordered by a key, as the feed's are: each of 5 chats has an old and a new key (or is
    /// absent); only chats whose key changed may move.
    @Test("changed-key diffs move only changed keys, optimally")
    func changedKeysExhaustive() throws {
        // Keys 0…2 for present chats, 3 for absent; ids break ties.
        let keyChoices = 4
        let chats = 4
        var combinations = 1
        for _ in 0..<(2 * chats) { combinations *= keyChoices }
        for code in 0..<combinations {
            var rest = code
            var oldKeys: [Int: Int] = [:]
            var newKeys: [Int: Int] = [:]
            for chat in 0..<chats {
                let oldKey = rest % keyChoices
                rest /= keyChoices
                let newKey = rest % keyChoices
                rest /= keyChoices
                if oldKey < 3 { oldKeys[chat] = oldKey }
                if newKey < 3 { newKeys[chat] = newKey }
            }
            func list(_ keys: [Int: Int]) -> [TestItem] {
                keys.sorted { ($0.value, $0.key) < ($1.value, $1.key) }.map { TestItem(id: $0.key, revision: $0.value) }
            }
            let old = list(oldKeys)
            let new = list(newKeys)
            let changed = Set(oldKeys.keys.filter { newKeys[$0] != nil && newKeys[$0] != oldKeys[$0] })
            let result = try ListDiffer.diff(from: old, to: new, orderKeyChanged: changed)
            try #require(ReferenceDiff.problem(with: result, old: old, new: new) == nil, "\(old) → \(new)")
            let moved = Set((result.structural?.moves ?? []).map { old[$0.from].id })
            try #require(moved.isSubset(of: changed), "\(old) → \(new) moved \(moved)")
            try #require(
                ReferenceDiff.stayWeight(of: result, old: old, new: new)
                    == ReferenceDiff.optimalWeight(old: old, new: new, mayMove: changed), "\(old) → \(new)")
        }
    }
}
