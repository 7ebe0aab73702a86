console.log("site loaded");
