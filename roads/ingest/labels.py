"""The spellings real systems use for outcomes, booleans and column headers, mapped to
canonical values.

Kept as plain dictionaries so readers can vectorise them (``replace_strict``). The header
spellings come from casino and live-dealer exports and APIs (``playerHand``, ``pScore``,
``dealerCards``, ``winType``, ``bootNo``, ``xue_number``/``pu_number``, ``局號``, ``閒家的牌``,
``莊對``), Macau and Hong Kong usage (``铺`` for a coup, ``例牌``/``天牌`` for a natural),
Russian dealing rooms (``сабо``, ``шуз``, ``раздача``, ``исход``) and Greek casino rules
(``σαμπό``/``διανομέας`` for the shoe, ``παρτίδα`` for a coup, ``μπάνκα``).
"""

from __future__ import annotations

#: The fields every reader stages, in order (:mod:`roads.ingest.readers`).
FIELDS = ("table_id", "shoe_id", "coup", "outcome", "player_cards", "banker_cards",
          "player_total", "banker_total", "natural", "player_pair", "banker_pair", "dealt_at")

_OUTCOME_SPELLINGS = {
    "B": ["b", "banker", "banco", "bank", "banker win", "banker wins", "庄", "莊", "庄赢",
          "莊贏", "庄家", "莊家", "банк", "банкир", "победа банка", "победа банкира",
          "μπάνκα", "μπανκα", "τραπεζίτης", "τραπεζιτης"],
    "P": ["p", "player", "punto", "player win", "player wins", "闲", "閒", "闲赢", "閒贏",
          "闲家", "閒家", "игрок", "победа игрока", "παίκτης", "παικτης"],
    "T": ["t", "tie", "tie game", "egalite", "égalité", "和", "和局", "ничья", "ισοπαλία",
          "ισοπαλια"],
}
#: lower-cased, stripped label -> B/P/T
OUTCOME_LABELS: dict[str, str] = {
    label: code for code, labels in _OUTCOME_SPELLINGS.items() for label in labels
}

TRUE_LABELS = {"1", "true", "t", "yes", "y", "x", "是", "有", "да", "ναι"}
FALSE_LABELS = {"0", "false", "f", "no", "n", "", "否", "无", "無", "нет", "όχι", "οχι"}

#: Column headers per canonical field: English (as exports and APIs write them, camelCase
#: included), Chinese (simplified, then traditional), Russian, Greek. Matched after
#: :func:`roads.ingest.header.normalise_header` (case, spaces, punctuation and accents do
#: not matter), so each spelling is written once, naturally.
HEADER_SPELLINGS: dict[str, tuple[str, ...]] = {
    "table_id": (
        "table", "table id", "table no", "table number", "table name", "table code", "tbl",
        "台", "台号", "桌", "桌号", "台桌", "台桌号", "桌台号", "台桌ID",
        "檯", "檯號", "台號", "桌號", "台桌號",
        "стол", "номер стола", "стол №",
        "τραπέζι", "αριθμός τραπεζιού", "τραπέζι αρ."),
    "shoe_id": (
        "shoe", "shoe id", "shoe no", "shoe number", "shoe code", "boot", "boot no", "xue",
        "xue number", "靴", "靴号", "靴次", "牌靴", "牌靴号", "靴號", "牌靴號",
        "шуз", "шу", "сабо", "башмак", "номер шуза", "номер сабо",
        "σαμπό", "διανομέας", "παπούτσι", "αριθμός σαμπό"),
    "coup": (
        "coup", "coup no", "coup number", "hand", "hand no", "hand number", "round",
        "round no", "round number", "game", "game no", "game number", "deal", "deal no",
        "pu", "pu number", "局", "局号", "局数", "铺", "铺号", "局號", "局數", "鋪", "鋪號",
        "номер", "раздача", "номер раздачи", "раунд", "номер раунда", "игра", "номер игры",
        "партия",
        "παρτίδα", "αριθμός παρτίδας", "γύρος", "αριθμός γύρου", "χέρι", "μοιρασιά"),
    "outcome": (
        "outcome", "result", "winner", "win", "winning side", "win type", "game result",
        "结果", "开奖结果", "游戏结果", "赢家", "胜方", "输赢",
        "結果", "開獎結果", "遊戲結果", "贏家", "勝方", "輸贏",
        "результат", "исход", "победитель", "итог",
        "αποτέλεσμα", "νικητής", "έκβαση"),
    "player_cards": (
        "player cards", "player hand", "player", "punto", "p cards", "p hand", "player card",
        "punto cards", "闲牌", "闲家牌", "闲家的牌", "閒牌", "閒家牌", "閒家的牌",
        "карты игрока", "рука игрока", "игрок",
        "φύλλα παίκτη", "κάρτες παίκτη", "χαρτιά παίκτη", "παίκτης"),
    "banker_cards": (
        "banker cards", "banker hand", "banker", "banco", "b cards", "b hand", "banker card",
        "banco cards", "dealer cards", "dealer hand",
        "庄牌", "庄家牌", "庄家的牌", "莊牌", "莊家牌", "莊家的牌",
        "карты банкира", "карты банка", "рука банкира", "банкир",
        "φύλλα μπάνκας", "κάρτες μπάνκας", "φύλλα τραπεζίτη", "κάρτες τραπεζίτη", "μπάνκα",
        "τραπεζίτης"),
    "player_total": (
        "player total", "p total", "player points", "player score", "player value",
        "player point", "p score", "p points", "player total score", "punto total",
        "闲点", "闲点数", "闲家点数", "闲家点", "閒點", "閒點數", "閒家點數", "閒家點",
        "очки игрока", "сумма игрока", "счёт игрока",
        "πόντοι παίκτη", "σύνολο παίκτη", "βαθμοί παίκτη"),
    "banker_total": (
        "banker total", "b total", "banker points", "banker score", "banker value",
        "banker point", "b score", "b points", "banker total score", "banco total",
        "dealer total", "dealer score",
        "庄点", "庄点数", "庄家点数", "庄家点", "莊點", "莊點數", "莊家點數", "莊家點",
        "очки банкира", "сумма банкира", "счёт банкира",
        "πόντοι μπάνκας", "σύνολο μπάνκας", "πόντοι τραπεζίτη", "σύνολο τραπεζίτη"),
    "natural": (
        "natural", "nat", "is natural", "例牌", "天牌", "натуральная", "натурал",
        "φυσικό", "νατουράλ"),
    "player_pair": (
        "player pair", "p pair", "pp", "闲对", "闲对子", "閒對", "閒對子", "пара игрока",
        "ζεύγος παίκτη", "ζευγάρι παίκτη"),
    "banker_pair": (
        "banker pair", "b pair", "bp", "dealer pair", "庄对", "庄对子", "莊對", "莊對子",
        "пара банкира", "пара банка", "ζεύγος μπάνκας", "ζευγάρι μπάνκας",
        "ζεύγος τραπεζίτη"),
    "dealt_at": (
        "dealt at", "time", "timestamp", "date time", "date", "dealt", "deal time",
        "game time", "start time", "round time",
        "时间", "开牌时间", "发牌时间", "日期时间", "日期", "時間", "開牌時間", "發牌時間",
        "日期時間", "время", "дата и время", "дата", "время раздачи",
        "ώρα", "χρόνος", "ημερομηνία", "ημερομηνία και ώρα", "χρονοσφραγίδα"),
}
