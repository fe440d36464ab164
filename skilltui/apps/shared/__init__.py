"""Every widget, theme and dialog that more than one app uses: the live app (`skilltui train`),
the history browser (`skilltui review`). The apps share nothing else with each other, and this
package imports neither of them."""
