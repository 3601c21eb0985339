"""Message catalogs: every word a screen shows, in the five languages of the tables.

Road and outcome names follow DOMAIN.md ("Terms in the languages of the rule texts");
Traditional Chinese uses the glyphs printed on Macau and Hong Kong boards (莊/閒/對).
A missing key falls back to English, and a test checks that no catalog misses one.
"""

from __future__ import annotations

LANGUAGES: dict[str, str] = {
    "en": "English", "zh-Hans": "简体中文", "zh-Hant": "繁體中文", "ru": "Русский",
    "el": "Ελληνικά",
}

CATALOGS: dict[str, dict[str, str]] = {
    "en": {
        "bead_plate": "Bead Plate", "big_road": "Big Road", "big_eye_boy": "Big Eye Boy",
        "small_road": "Small Road", "cockroach_pig": "Cockroach Pig",
        "B": "B", "P": "P", "T": "T", "banker": "Banker", "player": "Player", "tie": "Tie",
        "banker_pair": "B pair", "player_pair": "P pair", "natural": "Natural",
        "coup": "Coup", "shoe": "Shoe", "table": "Table", "ask_banker": "Banker ask",
        "ask_player": "Player ask", "rules": "Rules", "limits": "Limits", "last_coup": "Last coup",
        "status_between_shoes": "Shoe finished — a new shoe is being prepared",
        "status_closed": "Table closed", "status_idle": "Table not open yet",
        "connecting": "Reconnecting…", "wins": "wins", "total": "total",
        "information_only": "Statistics are information only, not a betting recommendation",
    },
    "zh-Hans": {
        "bead_plate": "珠盘路", "big_road": "大路", "big_eye_boy": "大眼仔",
        "small_road": "小路", "cockroach_pig": "曱甴路",
        "B": "庄", "P": "闲", "T": "和", "banker": "庄", "player": "闲", "tie": "和",
        "banker_pair": "庄对", "player_pair": "闲对", "natural": "例牌",
        "coup": "局", "shoe": "靴", "table": "台", "ask_banker": "庄问路",
        "ask_player": "闲问路", "rules": "规则", "limits": "限红", "last_coup": "上一局",
        "status_between_shoes": "本靴已结束，正在准备新靴", "status_closed": "本台已关闭",
        "status_idle": "本台尚未开台", "connecting": "正在重新连接…", "wins": "赢",
        "total": "点", "information_only": "统计仅供参考，并非投注建议",
    },
    "zh-Hant": {
        "bead_plate": "珠盤路", "big_road": "大路", "big_eye_boy": "大眼仔",
        "small_road": "小路", "cockroach_pig": "曱甴路",
        "B": "莊", "P": "閒", "T": "和", "banker": "莊", "player": "閒", "tie": "和",
        "banker_pair": "莊對", "player_pair": "閒對", "natural": "例牌",
        "coup": "局", "shoe": "靴", "table": "枱", "ask_banker": "莊問路",
        "ask_player": "閒問路", "rules": "規則", "limits": "限紅", "last_coup": "上一局",
        "status_between_shoes": "本靴已結束，正在準備新靴", "status_closed": "本枱已關閉",
        "status_idle": "本枱尚未開枱", "connecting": "正在重新連線…", "wins": "贏",
        "total": "點", "information_only": "統計僅供參考，並非投注建議",
    },
    "ru": {
        "bead_plate": "Бисерная дорога", "big_road": "Большая дорога",
        "big_eye_boy": "Большой глаз", "small_road": "Малая дорога",
        "cockroach_pig": "Таракан",
        "B": "Б", "P": "И", "T": "Н", "banker": "Банк", "player": "Игрок", "tie": "Ничья",
        "banker_pair": "Пара Б", "player_pair": "Пара И", "natural": "Натуральная",
        "coup": "Раздача", "shoe": "Шуз", "table": "Стол", "ask_banker": "Если Банк",
        "ask_player": "Если Игрок", "rules": "Правила", "limits": "Лимиты",
        "last_coup": "Последняя раздача",
        "status_between_shoes": "Шуз закончен — готовится новый шуз",
        "status_closed": "Стол закрыт", "status_idle": "Стол ещё не открыт",
        "connecting": "Переподключение…", "wins": "выигрывает", "total": "очков",
        "information_only": "Статистика носит справочный характер и не является советом "
                            "для ставок",
    },
    "el": {
        "bead_plate": "Πίνακας χαντρών", "big_road": "Μεγάλος δρόμος",
        "big_eye_boy": "Μεγάλο μάτι", "small_road": "Μικρός δρόμος",
        "cockroach_pig": "Κατσαρίδα",
        "B": "Μ", "P": "Π", "T": "Ι", "banker": "Μπάνκα", "player": "Παίκτης",
        "tie": "Ισοπαλία", "banker_pair": "Ζεύγος Μ", "player_pair": "Ζεύγος Π",
        "natural": "Φυσικό", "coup": "Γύρος", "shoe": "Τραπουλοθήκη", "table": "Τραπέζι",
        "ask_banker": "Αν Μπάνκα", "ask_player": "Αν Παίκτης", "rules": "Κανόνες", "limits": "Όρια",
        "last_coup": "Τελευταίος γύρος",
        "status_between_shoes": "Η τραπουλοθήκη τελείωσε — ετοιμάζεται νέα",
        "status_closed": "Το τραπέζι έκλεισε", "status_idle": "Το τραπέζι δεν άνοιξε ακόμη",
        "connecting": "Επανασύνδεση…", "wins": "κερδίζει", "total": "πόντοι",
        "information_only": "Τα στατιστικά είναι μόνο πληροφορίες, όχι σύσταση στοιχήματος",
    },
}


def language(code: str | None) -> str:
    """A supported language code (English for anything else)."""
    return code if code in CATALOGS else "en"


def labels(code: str | None) -> dict[str, str]:
    """Every label of one language, English where the catalog has no entry."""
    return {**CATALOGS["en"], **CATALOGS[language(code)]}
