/*
 * datadir.h - where faultline's own files are: the plot helpers
 * (faultline-plot, verdict-html) and the bundled jobs.
 *
 * Found from the running binary, never from the source tree it was built
 * in: FAULTLINE_PLOT_DIR when set; beside the executable in a build tree
 * (./faultline next to plot/, a sanitizer build one folder down); an
 * installed copy's ../share/faultline (any PREFIX or DESTDIR, so a copied
 * tree works too); last, the prefix it was built for (FAULTLINE_DATADIR,
 * from the Makefile's PREFIX).
 */
#ifndef FAULTLINE_DATADIR_H
#define FAULTLINE_DATADIR_H

#include <stdbool.h>
#include <stddef.h>

/* The folder holding faultline-plot and verdict-html, in @buf. Sets
 * *installed when it is an installed copy's (share/faultline/plot). */
const char *datadir_plot(char *buf, size_t len, bool *installed);

/* The folder holding the bundled jobs (the .job files and their README), in @buf. */
const char *datadir_jobs(char *buf, size_t len);

#endif
